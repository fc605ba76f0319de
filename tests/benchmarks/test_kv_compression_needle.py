"""The needle benchmark at smoke size: budgets as stated, full budgets change nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("kvpress")

import torch  # noqa: E402

from optiforge.algorithms.kv_compression import UniformHalving  # noqa: E402
from optiforge.algorithms.kv_compression.press import BalanceKVPress, CompressorPress  # noqa: E402
from optiforge.benchmarks import kv_compression_needle as needle  # noqa: E402
from optiforge.callbacks.needle_retrieval import greedy_answers  # noqa: E402
from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule  # noqa: E402
from optiforge.lightning_modules.kv_lm.weights import NEEDLE, load_weights  # noqa: E402
from optiforge.problems.needles import needle_task  # noqa: E402
from tests.benchmarks.smoke_run import run_smoke  # noqa: E402


@pytest.fixture(scope="module")
def setting() -> tuple:
    """The shipped LM that copies, the data, and 6 prompts of 480 characters."""
    model = load_weights(NEEDLE)[0].net.llama
    data = TinyShakespeareDataModule(context_length=512)
    data.setup()
    text = data.decode(data.splits["train"].ids)
    rng = random.Random(0)
    return model, data, text, [needle_task(text, rng, 480) for _ in range(6)]


def test_smoke_run_keeps_the_stated_budgets(tmp_path: Path) -> None:
    """Accuracies in [0, 1]; kept context tokens: n >> k without window, 16 + 64 +
    (n - 80) >> k with it, SnapKV exactly that, PyramidKV that on average (+- 1)."""
    run_smoke("kv_compression_needle", tmp_path)
    payload = json.loads((tmp_path / "kv_compression_needle.json").read_text())
    n = payload["context_tokens"]
    assert n == 480 - len("\nABCD: ")
    for name, cells in payload["accuracy"].items():
        for rate in needle.RATES:
            mean, std, kept = cells[str(rate)]
            assert 0.0 <= mean <= 1.0 and std >= 0.0
            expected = int(n * rate) if name in ("balancekv", "uniform") else needle.budget(n, rate)
            assert abs(kept - expected) <= (1 if name == "pyramidkv" else 0), (name, rate)
    check = payload["retrieval_check"]
    assert set(check) == {"uncompressed", "control", "next_char_accuracy", "mean_log_prob"}
    assert 0.0 <= check["next_char_accuracy"] <= 1.0 and check["mean_log_prob"] < 0.0
    assert (tmp_path / "kv_compression_needle.png").is_file()


def test_keeping_every_token_equals_the_uncompressed_cache(setting: tuple) -> None:
    """BalanceKVPress at ratio 0 (both variants) and uniform halving at rate 1 give the very
    answers of the uncompressed cache, with all 473 context tokens kept."""
    model, data, _, tasks = setting
    ids = torch.stack([data.encode(task.prompt) for task in tasks])
    plain, kept = needle.answer(model, None, ids[:, :-7], ids[:, -7:])
    assert kept == 473
    for press in (
        BalanceKVPress(0.0),
        BalanceKVPress(0.0, variant="authors"),
        CompressorPress(UniformHalving(1.0)),
    ):
        same, same_kept = needle.answer(model, press, ids[:, :-7], ids[:, -7:])
        assert torch.equal(same, plain) and same_kept == 473


def test_cached_greedy_answers_equal_full_recomputation(setting: tuple) -> None:
    """The benchmark's answers (prefill, then the query and the answer one id at a time against
    the cache, explicit positions) equal greedy decoding by full forwards without a cache."""
    model, data, _, tasks = setting
    ids = torch.stack([data.encode(task.prompt) for task in tasks])
    cached, _ = needle.answer(model, None, ids[:, :-7], ids[:, -7:])
    full = greedy_answers(lambda batch: model(input_ids=batch).logits, ids, 4, len(ids))
    assert torch.equal(cached, full)
