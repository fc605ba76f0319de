"""The KV compression benchmarks run at toy size; the e2e helpers build a faithful tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optiforge.benchmarks import kv_compression
from tests.benchmarks.smoke_run import run_smoke


def test_benchmark_writes_errors_tails_and_costs(tmp_path: Path) -> None:
    """Smoke preset, synthetic keys and the shipped LM: every method and rate has a finite error,
    kept-tail counts within [0, 32], the recent window keeps the whole tail, costs per block."""
    run_smoke("kv_compression", tmp_path)
    payload = json.loads((tmp_path / "kv_compression.json").read_text())
    for table in payload["tables"].values():
        for name in kv_compression.METHODS:
            for rate in kv_compression.RATES:
                mean, std = table[name][str(rate)]
                assert 0.0 < mean < 10.0 and std >= 0.0
                assert 0.0 <= table[f"{name}_tail"][str(rate)][0] <= kv_compression.TAIL
        assert table["streaming_llm_tail"][str(0.5)][0] == kv_compression.TAIL
    assert [row["block_size"] for row in payload["cost"]] == [16, 32]
    assert payload["model"]["mean_attention_entropy"] < payload["model"]["log_context"]
    assert (tmp_path / "kv_compression_error.png").is_file()


def test_char_tokenizer_and_passages_match_the_text() -> None:
    """The character tokenizer round-trips text with the datamodule's ids; passages end at a
    line break, the question is the next line, the truth what follows it."""
    pytest.importorskip("kvpress")
    from optiforge.benchmarks.kv_compression_e2e import agreement, char_tokenizer, passages

    text = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak.\n" * 8
    vocab = sorted(set(text))
    tokenizer = char_tokenizer(vocab)
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert ids == [vocab.index(c) for c in text] and tokenizer.decode(ids) == text
    for context, question, truth in passages(text, 3, 40, 10):
        assert context.endswith("\n") and len(context) == 40 and "\n" not in question
        assert context + question + "\n" + truth in text and len(truth) == 10
    assert agreement("abcx", "abcd") == 0.75
