"""MSE benchmark pieces: analytic MSEs of exact estimators, evaluation accounting, ranking."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.benchmarks.zeroth_order_mse import best_at_budget, quadratic, squared_errors


def errors_of(name: str, draws: int, mu: float = 0.1, d: int = 12):
    """20000 estimates of `name` on the d = 12 quadratic, with its exact gradient 2 A^T A x."""
    generator = torch.Generator().manual_seed(0)
    f, x = quadratic(d, generator)
    a = torch.rand(d, d, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 2 - 1
    grad = 2 * a.T @ a @ x
    generator = torch.Generator().manual_seed(1)
    return squared_errors(name, f, x, grad, mu, 20000, draws, generator)


@pytest.mark.parametrize(
    ("name", "draws", "expected"),
    [("P4 zipf", 1, 11.0), ("central sphere", 1, 11.0), ("central sphere", 2, 5.5),
     ("central Gaussian", 2, 6.5)],
)  # fmt: skip
def test_exact_estimators_have_the_direction_sampling_mse(name, draws, expected) -> None:
    """Along a quadratic P4 and the central difference equal v.g exactly, so the relative MSE
    of k averaged draws is (E|v|^2 - 1) / k: (d - 1) / k on the sqrt(d) sphere, (d + 1) / k for
    Gaussian v (d = 12); within 4 standard errors of 20000 estimates."""
    errors, _, _ = errors_of(name, draws)
    standard_error = float(errors.std()) / math.sqrt(errors.numel())
    assert abs(float(errors.mean()) - expected) < 4 * standard_error


@pytest.mark.parametrize(
    ("name", "draws", "mean", "largest"),
    [("forward sphere", 3, 4.0, 4.0), ("central Gaussian", 2, 4.0, 4.0), ("P3 zipf", 1, 2.5, 3.0),
     ("P3 zipf", 2, 4.0, 5.0), ("P4 geometric", 1, 3.5, 4.0)],
)  # fmt: skip
def test_evaluations_per_estimate(name: str, draws: int, mean: float, largest: float) -> None:
    """f(x) is shared by an estimate's draws: forward k + 1, central 2 k, P3 1 + 1.5 k on
    average (3 at most for one draw), P4 geometric (c = 1/2) 4 - P(N = 1) = 3.5."""
    _, mean_evals, max_evals = errors_of(name, draws)
    assert mean_evals == pytest.approx(mean, abs=0.03) and max_evals == largest


def test_ranking_keeps_only_estimators_within_the_budget() -> None:
    """An estimator whose largest count exceeds the budget is never ranked, however low its MSE."""
    row = {"problem": "quadratic", "mu": 0.1, "budget": 4, "d": 10}
    rows = [
        {**row, "estimator": "P3 zipf x2", "max_evals": 5.0, "relative_mse": 1.0},
        {**row, "estimator": "forward sphere", "max_evals": 4.0, "relative_mse": 3.0},
        {**row, "estimator": "P4 zipf", "max_evals": 4.0, "relative_mse": 2.0},
    ]
    (ranked,) = best_at_budget(rows)
    assert (ranked["best"], ranked["runner_up"]) == ("P4 zipf", "forward sphere")
