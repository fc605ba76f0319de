"""Weighted attention: exact at rate 1, and the log-weight bias equals the explicit weighted sum."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.kv_compression import (
    BalanceKV,
    KeyNorm,
    RecentWindow,
    SnapKV,
    UniformHalving,
    relative_error,
    weighted_attention,
)
from tests.devices import DEVICES


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", [BalanceKV, UniformHalving, KeyNorm, RecentWindow, SnapKV])
def test_rate_one_output_equals_exact_attention(method: type, device: str) -> None:
    """At rate 1 every method keeps all tokens with weight 1: the output is exact attention."""
    generator = torch.Generator(device).manual_seed(0)
    keys, values, queries = (
        torch.randn(2, 3, n, 8, generator=generator, device=device) for n in (40, 40, 5)
    )
    kept = method(1.0, sink_tokens=2, recent_tokens=3).compress(
        keys, values, queries=queries, generator=generator
    )
    exact = weighted_attention(queries, keys, values)
    approx = weighted_attention(queries, kept.keys, kept.values, kept.log_weights)
    assert torch.allclose(approx, exact, atol=1e-6)
    assert relative_error(approx, exact).item() < 1e-6
    assert torch.equal(kept.positions[0, 0].cpu(), torch.arange(40))


def test_weighted_attention_matches_a_hand_computed_case() -> None:
    """One query, two keys: softmax([0, 1] + log[1, 2]) gives weights 1/(1+2e) and 2e/(1+2e)."""
    queries = torch.tensor([[1.0, 0.0]]) * 2**0.5  # logits = <q, k> / sqrt(2) = k_x
    keys = torch.tensor([[0.0, 5.0], [1.0, -3.0]])
    values = torch.tensor([[1.0], [0.0]])
    out = weighted_attention(queries, keys, values, torch.log(torch.tensor([1.0, 2.0])))
    e = torch.exp(torch.tensor(1.0))
    assert torch.allclose(out, torch.tensor([[1.0 / (1.0 + 2.0 * e)]]))


@settings(max_examples=30, deadline=None)
@given(
    counts=st.lists(st.integers(1, 4), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_log_weight_bias_equals_explicit_weighted_sum(counts: list[int], seed: int) -> None:
    """Weights w_i as the bias log w_i give sum_i w_i e^{s_i} v_i / sum_i w_i e^{s_i}, which is
    also attention over the cache with token i repeated w_i times."""
    generator = torch.Generator().manual_seed(seed)
    n = len(counts)
    keys = torch.randn(n, 4, generator=generator, dtype=torch.float64)
    values = torch.randn(n, 3, generator=generator, dtype=torch.float64)
    queries = torch.randn(5, 4, generator=generator, dtype=torch.float64)
    weights = torch.tensor(counts, dtype=torch.float64)
    biased = weighted_attention(queries, keys, values, weights.log())
    scores = torch.exp(queries @ keys.T / 2.0) * weights
    explicit = scores @ values / scores.sum(-1, keepdim=True)
    repeat = torch.repeat_interleave(torch.arange(n), weights.long())
    repeated = weighted_attention(queries, keys[repeat], values[repeat])
    assert torch.allclose(biased, explicit) and torch.allclose(biased, repeated)
