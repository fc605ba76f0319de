"""Telescoping constructions: exact expectations, Monte-Carlo unbiasedness, evaluation counts."""

from __future__ import annotations

import math

import pytest
import torch

from optimizers.zo_estimators import (
    CONSTRUCTIONS,
    evaluations,
    expected_terms,
    groups,
    sample_terms,
)
from optimizers.zo_schedules import Geometric, Zipf


def cubic(t: float) -> float:
    """f(x + t v) along one direction: derivative 3 at t = 0, curvature 6, third derivative 6."""
    return (1.0 + t) ** 3


def combine(terms: list[tuple[float, float]], f=cubic) -> float:
    return sum(coefficient * f(offset) for offset, coefficient in terms)


@pytest.mark.parametrize("construction", list(CONSTRUCTIONS))
@pytest.mark.parametrize("schedule", [Geometric(0.1, 0.5), Zipf(0.1, 3.0)], ids=["geo", "zipf"])
def test_expectation_over_u_and_n_is_the_directional_derivative(construction, schedule) -> None:
    """Summed over N <= n (exact, no sampling), E[P] = D_{n+1}: the derivative 3 plus the
    forward-difference remainder 3 mu + mu^2 at mu_{n+1}, for every construction."""
    n_max = 25
    mu = schedule.mu(n_max + 1)
    assert combine(expected_terms(construction, schedule, n_max)) == pytest.approx(
        3.0 + 3.0 * mu + mu**2, abs=1e-6
    )


@pytest.mark.parametrize("construction", list(CONSTRUCTIONS))
def test_groups_partition_the_full_estimator(construction: str) -> None:
    """Adding a construction's groups gives P4's combination for every N."""
    schedule = Geometric(0.2, 0.4)
    for n in (1, 2, 6):
        total = sum(combine(group) for group in groups(construction, schedule, n))
        assert total == pytest.approx(combine(groups("P4", schedule, n)[0]), rel=1e-9)


@pytest.mark.parametrize(
    ("construction", "counts"), [("P4", {3, 4}), ("P3", {2, 3}), ("P2", {2}), ("P1", {1})]
)
def test_evaluation_counts(construction: str, counts: set[int]) -> None:
    """P4 evaluates 4 points (3 when N = 1: mu_N = mu_1), P3 2 or 3, P2 2, P1 1."""
    generator = torch.Generator().manual_seed(0)
    seen = {evaluations(sample_terms(construction, Zipf(0.1), generator)) for _ in range(200)}
    assert seen == counts


@pytest.mark.parametrize("construction", ["P4", "P3"])
@pytest.mark.parametrize("schedule", [Geometric(0.3, 0.5), Zipf(0.3, 3.0)], ids=["geo", "zipf"])
def test_monte_carlo_mean_is_unbiased_where_two_point_is_not(construction, schedule) -> None:
    """40000 draws of (N, U) at a large mu = 0.3: the mean is within 4 standard errors of the
    derivative 3, while the forward difference D_1 = 3 + 3 mu + mu^2 is off by ~1."""
    generator = torch.Generator().manual_seed(1)
    samples = torch.tensor(
        [combine(sample_terms(construction, schedule, generator)) for _ in range(40000)],
        dtype=torch.float64,
    )
    error = abs(float(samples.mean()) - 3.0)
    standard_error = float(samples.std()) / math.sqrt(samples.numel())
    assert error < 4 * standard_error + 1e-12
    assert abs(combine([(0.3, 1 / 0.3), (0.0, -1 / 0.3)]) - 3.0) > 0.9
    if construction == "P4":  # on a cubic N still matters: (D_{N+1} - D_N) / p_N varies
        assert standard_error < 0.02


def test_p4_is_exact_on_a_quadratic_for_every_draw() -> None:
    """Along a quadratic, (D_{n+1} - D_n) / p_n = -mu_1 f''/2 for the optimal pairing, so every
    P4 draw equals the derivative exactly (zero variance), and P3 averages to it."""
    generator = torch.Generator().manual_seed(2)
    quadratic = lambda t: 2.0 + 3.0 * t + 5.0 * t * t  # noqa: E731
    for _ in range(50):
        assert combine(sample_terms("P4", Zipf(0.2), generator), quadratic) == pytest.approx(3.0)
    p3 = [combine(sample_terms("P3", Geometric(0.2), generator), quadratic) for _ in range(4000)]
    first, telescoping = 2 * (3.0 + 5 * 0.2), -2 * 5 * 0.2  # 2 D_1 or 2 (D_{N+1} - D_N) / p_N
    assert all(min(abs(v - first), abs(v - telescoping)) < 1e-5 for v in p3)
    assert sum(p3) / len(p3) == pytest.approx(3.0, abs=4 * 2 * 3.0 / math.sqrt(4000))


def test_unknown_construction_fails_naming_it() -> None:
    """An unknown construction name raises a ValueError listing the four."""
    with pytest.raises(
        ValueError, match=r"^construction must be one of \['P4', 'P3', 'P2', 'P1'\]"
    ):
        groups("P5", Geometric(), 1)
