"""Telescoping constructions: exact expectations, Monte-Carlo unbiasedness, evaluation counts."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.optimizers.zo_estimators import (
    CONSTRUCTIONS,
    evaluations,
    expected_terms,
    groups,
    sample_terms,
)
from optiforge.optimizers.zo_schedules import Geometric, Zipf


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
    derivative 3, while the constructions' own forward-difference group D_1 is 3 + 3 mu + mu^2,
    off by ~1."""
    generator = torch.Generator().manual_seed(1)
    samples = torch.tensor(
        [combine(sample_terms(construction, schedule, generator)) for _ in range(40000)],
        dtype=torch.float64,
    )
    error = abs(float(samples.mean()) - 3.0)
    standard_error = float(samples.std()) / math.sqrt(samples.numel())
    assert error < 4 * standard_error + 1e-12
    forward = combine(groups("P3", schedule, 1)[0])  # the construction's own D_1 group
    assert forward == pytest.approx(3.0 + 3.0 * 0.3 + 0.3**2, rel=1e-12)  # 3 + 3 mu + mu^2
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


def expected_absolute(construction: str, schedule, f, n_max: int) -> float:
    """E|P| with N's sum cut at n_max: sum_n p_n sum_groups |group(f)| (U uniform over the
    groups, each drawn group scaled by their number, so the two factors cancel)."""
    return sum(
        schedule.prob(n)
        * sum(abs(combine(group, f)) for group in groups(construction, schedule, n))
        for n in range(1, n_max + 1)
    )


@pytest.mark.parametrize("n_max", [5, 20, 40])
def test_one_quotient_estimator_has_no_finite_mean_on_a_linear_loss(n_max: int) -> None:
    """On f(x + t v) = 2 t every D_n is 2, so P2's groups are 2, 2 / p_n and -2 / p_n:
    E|P2| cut at n_max is 2 (P(N <= n_max) + 2 n_max), unbounded in n_max (hand-computed).
    P3 and P4 stay at |D_1| = 2 (their telescoping term is 0 on a linear loss)."""
    schedule = Geometric(0.1, 0.5)
    linear = lambda t: 2.0 * t  # noqa: E731
    cut = 1.0 - 0.5**n_max
    assert expected_absolute("P2", schedule, linear, n_max) == pytest.approx(
        2.0 * (cut + 2.0 * n_max), rel=1e-9
    )
    for construction in ("P3", "P4"):
        assert expected_absolute(construction, schedule, linear, n_max) == pytest.approx(
            2.0 * cut, rel=1e-9
        )


def test_one_evaluation_estimator_has_no_finite_mean_on_a_constant_loss() -> None:
    """On a constant loss f = 1 every difference vanishes (P4 = 0 for every draw), but P1 keeps
    single function values with coefficients of order 1 / (p_n mu_n): E|P1| cut at n_max grows at
    least like sum_n 1 / mu_{n+1} = (2^(n_max + 1) - 2) / mu_1 for the ratio-1/2 schedule."""
    schedule = Geometric(0.1, 0.5)
    constant = lambda t: 1.0  # noqa: E731
    for n_max in (5, 10, 20):
        bound = sum(1.0 / schedule.mu(n + 1) for n in range(1, n_max + 1))
        assert bound == pytest.approx((2.0 ** (n_max + 1) - 2.0) / 0.1)
        assert expected_absolute("P1", schedule, constant, n_max) >= bound
        assert expected_absolute("P4", schedule, constant, n_max) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("construction", ["P2", "P1"])
@pytest.mark.parametrize("sharpness", [10.0, 100.0, 1000.0])
def test_bump_family_from_the_impossibility_proof(construction: str, sharpness: float) -> None:
    """The docs prove that no estimator with at most 2 evaluations is unbiased with a finite mean,
    using phi_j(t) = t exp(-j^2 t^2): derivative 1 at 0, |phi_j'| <= 1, |phi_j| <= 1 / (j sqrt(2e)),
    phi_j -> 0 pointwise. Check those three facts, and that our P2 / P1 are still unbiased on
    phi_j in the summed-over-N sense: E[P] cut at n_max is D_{n_max + 1} -> 1."""
    j = sharpness

    def bump(t: float) -> float:
        return t * math.exp(-(j**2) * t**2)

    t = torch.linspace(-1.0, 1.0, 200001, dtype=torch.float64)
    values = t * torch.exp(-(j**2) * t**2)
    slopes = torch.exp(-(j**2) * t**2) * (1.0 - 2.0 * j**2 * t**2)
    assert float(slopes.abs().max()) <= 1.0 + 1e-12
    assert float(values.abs().max()) <= 1.0 / (j * math.sqrt(2.0 * math.e)) + 1e-12
    assert abs(bump(0.3)) < 1e-3  # far from 0 the bump has already vanished
    schedule = Geometric(0.1, 0.5)
    n_max = 60
    mu = schedule.mu(n_max + 1)
    assert combine(expected_terms(construction, schedule, n_max), bump) == pytest.approx(
        bump(mu) / mu, rel=1e-9
    )
    assert bump(mu) / mu == pytest.approx(1.0, abs=1e-9)
