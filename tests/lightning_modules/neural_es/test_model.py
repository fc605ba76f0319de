"""The Pareto set model: its block distribution, autoregression and argument checks."""

from __future__ import annotations

import pytest
import torch

from optiforge.lightning_modules.neural_es.model import ParetoSetModel


def test_first_block_has_the_rank_one_covariance() -> None:
    """For one preference the first block's samples have covariance s^2 (I + v v^T)."""
    torch.manual_seed(0)
    model = ParetoSetModel(dim=6, num_obj=2, num_blocks=2, hidden_sizes=(8,)).double()
    n = 100_000
    prefs = torch.tensor([[0.3, 0.7]], dtype=torch.float64).expand(n, 2)
    noise = torch.randn(n, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch.no_grad():
        x, params = model(prefs, noise)
    block = x[:, :3]
    s, v = params.scale[0, 0], params.factors[0, 0, 0]
    expected = s**2 * (torch.eye(3, dtype=torch.float64) + torch.outer(v, v))
    assert torch.allclose(block.mean(0), params.mean[0, 0], atol=4 * float(s) / n**0.5 * 3)
    assert torch.allclose(torch.cov(block.T), expected, atol=0.03 * float(expected.abs().max()))


def test_means_feed_the_later_blocks() -> None:
    """Without noise the answer is each block's mean; later blocks depend on earlier values."""
    torch.manual_seed(0)
    model = ParetoSetModel(dim=8, num_obj=2, num_blocks=4, hidden_sizes=(16, 16), rank=2)
    prefs = torch.tensor([[0.5, 0.5], [0.5, 0.5]])
    x, params = model(prefs)
    assert torch.allclose(x, params.mean.detach().reshape(2, 8))
    noise = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, noisy = model(prefs, noise)
    assert torch.allclose(noisy.mean[0, 0], noisy.mean[1, 0])
    assert not torch.allclose(noisy.mean[0, 1], noisy.mean[1, 1])
    factors = noisy.factors[0, :, 0]  # two Gram-Schmidt factors: orthogonal
    assert abs(float(factors[0] @ factors[1])) < 1e-5 * float(factors.norm() ** 2)


def test_bad_arguments_are_refused() -> None:
    """num_blocks must divide dim; rank and hidden sizes must be positive."""
    with pytest.raises(ValueError, match="num_blocks must be >= 1 and divide dim"):
        ParetoSetModel(10, 2, num_blocks=4)
    with pytest.raises(ValueError, match="rank must be >= 1"):
        ParetoSetModel(8, 2, num_blocks=4, rank=0)
    with pytest.raises(ValueError, match="hidden_sizes"):
        ParetoSetModel(8, 2, num_blocks=4, hidden_sizes=())
