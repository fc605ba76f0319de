"""BalanceKVPress in kvpress: nothing changes at ratio 0, exact budgets, the bias is the weights."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("kvpress")

from transformers import DynamicCache, LlamaForCausalLM  # noqa: E402

from optiforge.algorithms.kv_compression import SnapKV, UniformHalving  # noqa: E402
from optiforge.algorithms.kv_compression.press import LOG_WEIGHTS, BalanceKVPress, CompressorPress  # noqa: E402
from optiforge.lightning_modules.kv_lm.model import LlamaCharNet  # noqa: E402

CONTEXT, FOLLOW = 150, 12


def tiny_llama(heads: int = 2, layers: int = 2, implementation: str = "sdpa") -> LlamaForCausalLM:
    """A random Llama on 65 symbols (no download)."""
    torch.manual_seed(0)
    return LlamaCharNet(65, 256, 16 * heads, heads, layers, 32, implementation).llama.eval()


def prefill_and_continue(
    model: LlamaForCausalLM, press: BalanceKVPress | None, ids: torch.Tensor
) -> tuple[DynamicCache, torch.Tensor]:
    """Prefill ids[:, :CONTEXT] (under the press), then the logits of the next FOLLOW ids."""
    cache = DynamicCache()
    with torch.no_grad():
        if press is None:
            model.model(input_ids=ids[:, :CONTEXT], past_key_values=cache)
        else:
            with press(model):
                model.model(input_ids=ids[:, :CONTEXT], past_key_values=cache)
        lengths = [cache.get_seq_length(layer) for layer in range(len(cache))]
        positions = torch.arange(CONTEXT, CONTEXT + FOLLOW).unsqueeze(0)
        logits = model(
            input_ids=ids[:, CONTEXT:], past_key_values=cache, position_ids=positions
        ).logits
    return lengths, logits


def test_ratio_zero_changes_nothing_and_budgets_are_exact() -> None:
    """Ratio 0: full cache, logits equal to no press; ratio 3/4: every layer keeps 150 >> 2."""
    model = tiny_llama()
    ids = torch.randint(65, (1, CONTEXT + FOLLOW), generator=torch.Generator().manual_seed(1))
    lengths, plain = prefill_and_continue(model, None, ids)
    same_lengths, same = prefill_and_continue(model, BalanceKVPress(0.0), ids)
    assert same_lengths == lengths == [CONTEXT, CONTEXT] and torch.equal(same, plain)
    press = BalanceKVPress(0.75, block_size=32, sink_tokens=2, recent_tokens=4)
    short, _ = prefill_and_continue(model, press, ids)
    assert short == [2 + 4 + (CONTEXT - 6) // 4] * 2
    authors = BalanceKVPress(0.75, block_size=32, variant="authors")
    assert (authors.sink_tokens, authors.recent_tokens) == (16, 64)
    kept, _ = prefill_and_continue(model, authors, ids)
    assert kept == [16 + 64 + (CONTEXT - 80) // 4] * 2
    with pytest.raises(ValueError, match="variant must be one of \\('ours', 'authors'\\)"):
        BalanceKVPress(0.5, variant="paper")


@pytest.mark.parametrize("variant", ["ours", "authors"])
def test_decoding_bias_equals_a_cache_with_repeated_tokens(variant: str) -> None:
    """One head, one layer: the biased decoding logits equal those of an unbiased cache in which
    every kept token of weight w appears w times (what the weights stand for), in both variants
    (the authors' with 4 sinks and 8 recent tokens)."""
    model = tiny_llama(heads=1, layers=1)
    ids = torch.randint(65, (1, CONTEXT + FOLLOW), generator=torch.Generator().manual_seed(2))
    windows = {"sink_tokens": 4, "recent_tokens": 8} if variant == "authors" else {}
    press = BalanceKVPress(0.75, block_size=32, variant=variant, **windows)
    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=ids[:, :CONTEXT], past_key_values=cache)
    positions = torch.arange(CONTEXT, CONTEXT + FOLLOW).unsqueeze(0)
    repeated = DynamicCache()
    for index, layer in enumerate(model.model.layers):
        weights = getattr(layer.self_attn, LOG_WEIGHTS)[0, 0].exp().round().long()
        assert weights.max() > 1
        keys, values = cache.layers[index].keys, cache.layers[index].values
        repeated.update(
            keys.repeat_interleave(weights, dim=2), values.repeat_interleave(weights, dim=2), index
        )
    with torch.no_grad():
        biased = model(input_ids=ids[:, CONTEXT:], past_key_values=cache, position_ids=positions)
        for layer in model.model.layers:
            setattr(layer.self_attn, LOG_WEIGHTS, None)
        plain = model(input_ids=ids[:, CONTEXT:], past_key_values=repeated, position_ids=positions)
    assert torch.allclose(biased.logits, plain.logits, atol=1e-5)


def test_bad_ratio_and_eager_attention_are_refused() -> None:
    """A kept share that is not 1/2^k names compression_ratio; eager attention is refused."""
    with pytest.raises(ValueError, match="compression_ratio must be 1 - 1/2\\^k"):
        BalanceKVPress(0.6)
    model = tiny_llama(implementation="eager")
    with (
        pytest.raises(ValueError, match="attn_implementation must be one of"),
        BalanceKVPress(0.5)(model),
    ):
        pass


def test_compressor_press_runs_a_baseline_and_refuses_query_methods() -> None:
    """CompressorPress(UniformHalving(1/2)) halves every layer; SnapKV (queries) is refused."""
    model = tiny_llama()
    ids = torch.randint(65, (1, CONTEXT + FOLLOW), generator=torch.Generator().manual_seed(3))
    lengths, _ = prefill_and_continue(model, CompressorPress(UniformHalving(0.5)), ids)
    assert lengths == [CONTEXT // 2] * 2
    with pytest.raises(ValueError, match="compressor must be a KVCompressor without"):
        CompressorPress(SnapKV(0.5))
