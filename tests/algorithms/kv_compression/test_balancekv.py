"""BalanceKV and the baselines: budgets, weights, reproducibility and argument checks."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.algorithms.kv_compression import (
    BalanceKV,
    KeyNorm,
    RecentWindow,
    SnapKV,
    UniformHalving,
    halvings_for_rate,
    relative_error,
    weighted_attention,
)
from optiforge.algorithms.kv_compression.synthetic import clustered_with_needle
from tests.devices import DEVICES

METHODS = [BalanceKV, UniformHalving, KeyNorm, RecentWindow, SnapKV]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("rate", [0.5, 0.125])
def test_budget_positions_and_weights(method: type, rate: float, device: str) -> None:
    """n = 203 with 3 sinks and 8 recent: 11 + floor(192 * rate) tokens, increasing positions,
    weights powers of 2 at most 1 / rate, sinks and window kept with weight 1."""
    generator = torch.Generator(device).manual_seed(1)
    keys, values = (torch.randn(2, 2, 203, 16, generator=generator, device=device) for _ in "kv")
    queries = torch.randn(2, 2, 8, 16, generator=generator, device=device)
    compressor = method(rate, sink_tokens=3, recent_tokens=8)
    kept = compressor.compress(keys, values, queries=queries, generator=generator)
    assert kept.num_tokens == compressor.budget(203) == 11 + int(192 * rate)
    assert (kept.positions.diff(dim=-1) > 0).all()
    exponents = kept.log_weights / math.log(2.0)
    assert torch.allclose(exponents, exponents.round(), atol=1e-5)
    assert exponents.min() >= 0 and exponents.max() <= -math.log2(rate) + 1e-5
    assert (kept.log_weights[..., :3] == 0).all() and (kept.log_weights[..., -8:] == 0).all()
    assert torch.equal(kept.positions[..., -8:].cpu(), torch.arange(195, 203).expand(2, 2, 8))
    index = kept.positions.unsqueeze(-1).expand(*kept.positions.shape, 16)
    assert torch.equal(kept.keys, keys.gather(-2, index))


def test_balancekv_is_reproducible_from_its_seed() -> None:
    """The same generator seed gives the same kept tokens; another seed (usually) others."""
    inputs = clustered_with_needle((1, 2), 512, 16, generator=torch.Generator().manual_seed(0))
    method = BalanceKV(0.25, block_size=64, gamma=0.05)

    def run(seed: int) -> torch.Tensor:
        kept = method.compress(
            inputs.keys, inputs.values, generator=torch.Generator().manual_seed(seed)
        )
        return kept.positions

    assert torch.equal(run(3), run(3)) and not torch.equal(run(3), run(4))


def test_baseline_selections_by_hand() -> None:
    """Key norm keeps the smallest keys, the recent window the last ones, SnapKV the keys the
    observation query attends to (pooling width 1), all in position order."""
    keys = torch.tensor([[3.0, 0.0], [0.1, 0.0], [2.0, 0.0], [0.0, 0.5]])
    values = torch.zeros(4, 1)
    query = torch.tensor([[1.0, 0.0]])
    assert KeyNorm(0.5).compress(keys, values).positions.tolist() == [1, 3]
    assert RecentWindow(0.5).compress(keys, values).positions.tolist() == [2, 3]
    snap = SnapKV(0.5, kernel_size=1).compress(keys, values, queries=query)
    assert snap.positions.tolist() == [0, 2]


def test_balancekv_beats_uniform_halving_on_gaussian_keys() -> None:
    """Mean relative error over 8 seeds at rate 1/8 on Gaussian keys and offset values:
    BalanceKV below uniform halving (the paper's claim; measured 0.776 vs 0.805 when written;
    benchmarks/kv_compression.py measures it at every rate on clustered and real keys)."""
    errors: dict[type, list[float]] = {BalanceKV: [], UniformHalving: []}
    for seed in range(8):
        generator = torch.Generator().manual_seed(seed)
        keys = 1.5 * torch.randn(1, 4, 512, 16, generator=generator)
        values = torch.randn(1, 4, 512, 16, generator=generator) + 0.5
        queries = 1.5 * torch.randn(1, 4, 64, 16, generator=generator)
        exact = weighted_attention(queries, keys, values)
        for method in errors:
            kept = method(0.125).compress(keys, values, generator=generator)
            approx = weighted_attention(queries, kept.keys, kept.values, kept.log_weights)
            errors[method].append(relative_error(approx, exact).item())
    assert sum(errors[BalanceKV]) < sum(errors[UniformHalving])


@pytest.mark.parametrize("rate", [0.3, 0.0, 1.5, -0.5, float("nan")])
def test_rate_not_a_power_of_half_is_refused(rate: float) -> None:
    """A rate that is not 1/2^k names `rate` and the allowed values."""
    with pytest.raises(ValueError, match="rate must be a power of 1/2"):
        BalanceKV(rate)
    assert halvings_for_rate(0.0625) == 4


def test_bad_arguments_name_the_argument() -> None:
    """block_size 0, negative gamma or sinks, even SnapKV pooling, and more sinks plus window
    than tokens each fail naming their argument; SnapKV without queries fails too."""
    with pytest.raises(ValueError, match="block_size must be >= 1, got 0"):
        BalanceKV(0.5, block_size=0)
    with pytest.raises(ValueError, match="gamma must be >= 0"):
        BalanceKV(0.5, gamma=-1.0)
    with pytest.raises(ValueError, match="sink_tokens must be >= 0"):
        UniformHalving(0.5, sink_tokens=-1)
    with pytest.raises(ValueError, match="kernel_size must be an odd integer"):
        SnapKV(0.5, kernel_size=4)
    keys = torch.randn(1, 10, 4)
    with pytest.raises(ValueError, match="sink_tokens \\+ recent_tokens must be <= the 10"):
        BalanceKV(0.5, sink_tokens=11).compress(keys, keys)
    with pytest.raises(ValueError, match="SnapKV needs queries"):
        SnapKV(0.5).compress(keys, keys)
