"""The natural-gradient surrogate against the analytic natural gradient on a quadratic, and the
rank weights."""

from __future__ import annotations

import math

import torch

from optiforge.lightning_modules.neural_es.model import BlockParameters
from optiforge.lightning_modules.neural_es.surrogate import (
    natural_gradient_surrogate,
    rank_weights,
    weights_from_fitness,
)


def test_gradient_matches_the_natural_gradient_on_a_quadratic() -> None:
    """With weights -f(x)/n for f = x^T A x / 2 under N(mu, s^2 I), the loss's derivative in mu
    tends to s^2 A mu and in s^2 to trace(s^4 A) (Monte Carlo, antithetic, 400k samples)."""
    dim, n = 4, 200_000
    a = torch.diag(torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64))
    mu = torch.tensor([1.0, -0.5, 0.3, 0.8], dtype=torch.float64, requires_grad=True)
    scale = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    z = torch.randn(n, dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    z = torch.cat([z, -z])
    x = (mu + scale * z).detach()
    f = 0.5 * ((x @ a) * x).sum(1)
    weights = -(f - f.mean()) / len(x)
    params = BlockParameters(
        mu.expand(len(x), dim).unsqueeze(1),
        scale.expand(len(x)).unsqueeze(1),
        torch.zeros(len(x), 1, 1, dim, dtype=torch.float64),
    )
    loss = natural_gradient_surrogate(x, params, weights)
    grad_mu, grad_scale = torch.autograd.grad(loss, [mu, scale])
    s2 = 0.25
    assert torch.allclose(grad_mu, s2 * a @ mu.detach(), rtol=0.03, atol=0.005)
    grad_s2 = grad_scale / (2 * 0.5)  # dL/ds^2 = dL/ds / (2 s)
    assert math.isclose(float(grad_s2), s2**2 * float(a.trace()), rel_tol=0.05)


def test_rank_weights_by_hand() -> None:
    """N = 4: log(2.5) - log(1..4); the best sample (lowest fitness) gets the largest weight."""
    expected = torch.tensor([math.log(2.5) - math.log(k) for k in (1, 2, 3, 4)])
    assert torch.allclose(rank_weights(4), expected)
    fitness = torch.tensor([3.0, 1.0, 2.0, 0.0, 0.5, 0.7, 0.1, 0.9])  # two groups of four
    weights = weights_from_fitness(fitness, 4)
    assert torch.allclose(weights[:4], expected[[3, 1, 2, 0]])
    assert torch.allclose(weights[4:], expected[[1, 2, 0, 3]])
