"""The exact saddle point, operators and duality gap against closed forms and autograd."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.algorithms.diverse.problem import RobustRegression
from optiforge.algorithms.diverse.saddle import SaddleReference, scalar_saddle, shard_moments
from tests.algorithms.diverse.conftest import random_shards


def reference(features: Tensor, targets: Tensor, lx: float, ly: float) -> SaddleReference:
    return SaddleReference.from_sums(*shard_moments(features, targets), lx, ly)


def objective(x: Tensor, y: Tensor, features: Tensor, targets: Tensor, lx: float, ly: float):
    """f(x, y) summed from its definition, sample by sample (no moments)."""
    flat, labels = features.reshape(-1, features.shape[-1]), targets.reshape(-1)
    residual = flat @ x - labels
    terms = 0.5 * residual**2 + residual * (flat @ y)
    return terms.mean() + 0.5 * lx * x @ x - 0.5 * ly * y @ y


@settings(max_examples=20, deadline=None)
@given(
    a=st.lists(st.floats(-2, 2), min_size=2, max_size=6),
    b=st.lists(st.floats(-2, 2), min_size=6, max_size=6),
    lx=st.floats(0.05, 2.0),
    ly=st.floats(0.05, 2.0),
)
def test_scalar_saddle_matches_closed_form(a: list[float], b: list[float], lx: float, ly: float):
    """d = 1: the linear-system saddle equals x* = g (ly + h) / (ly (h + lx) + h^2)."""
    features = torch.tensor(a, dtype=torch.float64).reshape(1, -1, 1)
    targets = torch.tensor(b[: len(a)], dtype=torch.float64).reshape(1, -1)
    h, g = float((features**2).mean()), float((features[..., 0] * targets).mean())
    x, y = scalar_saddle(h, g, lx, ly)
    solved = reference(features, targets, lx, ly).saddle()
    torch.testing.assert_close(
        solved, torch.tensor([x, y], dtype=torch.float64), rtol=1e-9, atol=1e-12
    )


def test_tiny_closed_form_by_hand() -> None:
    """a = (1, 1), b = (1, 1), lambdas 1: h = g = 1, x* = 2 / 3, y* = -1 / 3."""
    assert scalar_saddle(1.0, 1.0, 1.0, 1.0) == pytest.approx((2 / 3, -1 / 3))


def test_components_are_autograd_gradients() -> None:
    """g_j = [grad_x f_j; -grad_y f_j] per sample, against autograd of the definition."""
    features, targets = random_shards(2, 5, 3)
    problem = RobustRegression(0.3, 0.7)
    z = torch.randn(2, 6, dtype=torch.float64)
    components = problem.components(z, features, targets)
    for node in range(2):
        for j in range(5):
            x = z[node, :3].clone().requires_grad_()
            y = z[node, 3:].clone().requires_grad_()
            value = objective(x, y, features[node, j : j + 1], targets[node, j : j + 1], 0.3, 0.7)
            gx, gy = torch.autograd.grad(value, (x, y))
            torch.testing.assert_close(components[node, j], torch.cat([gx, -gy]))


def test_saddle_zeroes_the_operator_and_the_gap(shards: tuple[Tensor, Tensor]) -> None:
    """At z* the global operator vanishes and the gap is 0; elsewhere the gap is positive and
    equals f(x, y_best) - f(x_best, y) from the sample-by-sample objective."""
    features, targets = shards
    ref = reference(features, targets, 0.2, 0.4)
    saddle = ref.saddle()
    operator = RobustRegression(0.2, 0.4).local_operator(saddle.expand(4, -1), features, targets)
    torch.testing.assert_close(
        operator.mean(0), torch.zeros(6, dtype=torch.float64), atol=1e-12, rtol=0
    )
    assert abs(float(ref.gap(saddle))) < 1e-12
    z = saddle + torch.randn(6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    x, y = z[:3], z[3:]
    y_best = y.clone().requires_grad_()
    x_best = x.clone().requires_grad_()
    optimizer = torch.optim.LBFGS([x_best, y_best], max_iter=200, tolerance_grad=1e-14)

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = objective(x_best, y, features, targets, 0.2, 0.4) - objective(
            x, y_best, features, targets, 0.2, 0.4
        )
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        brute = objective(x, y_best, features, targets, 0.2, 0.4) - objective(
            x_best, y, features, targets, 0.2, 0.4
        )
    assert float(ref.gap(z)) > 0
    assert float(ref.gap(z)) == pytest.approx(float(brute), rel=1e-8)
    assert float(ref.value(z)) == pytest.approx(float(objective(x, y, features, targets, 0.2, 0.4)))
