"""Telescoping schedules: optimal pairing, exact sampling, summability checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.optimizers.zo_schedules import Geometric, Zipf, make_schedule


@given(st.floats(1e-6, 1.0), st.floats(0.05, 0.95), st.floats(2.05, 6.0))
def test_pairing_is_the_variance_optimal_one(mu: float, ratio: float, exponent: float) -> None:
    """mu_n - mu_{n+1} = mu_1 p_n for both schedules (so rho = mu_1^2), and p sums to one."""
    for schedule in (Geometric(mu, ratio), Zipf(mu, exponent)):
        assert schedule.mu(1) == pytest.approx(mu, rel=1e-12)
        for n in (1, 2, 3, 7):
            gap = schedule.mu(n) - schedule.mu(n + 1)
            assert gap == pytest.approx(mu * schedule.prob(n), rel=1e-9, abs=1e-300)
    assert sum(Geometric(mu, ratio).prob(n) for n in range(1, 2000)) == pytest.approx(1.0)


def test_zipf_step_sizes_match_the_partial_sum_formula() -> None:
    """mu_n = mu_1 (1 - sum_{j<n} j^-s / zeta(s)), with zeta(3) = 1.2020569..."""
    schedule = Zipf(0.5, 3.0)
    zeta3 = 1.2020569031595942
    for n in (1, 2, 5, 20):
        partial = sum(j**-3.0 for j in range(1, n))
        assert schedule.mu(n) == pytest.approx(0.5 * (1 - partial / zeta3), rel=1e-10)


@pytest.mark.parametrize("schedule", [Geometric(1.0, 0.6), Zipf(1.0, 2.5)], ids=["geo", "zipf"])
def test_sampled_frequencies_match_the_probabilities(schedule: Geometric | Zipf) -> None:
    """20000 draws: the frequencies of N = 1..4 lie within 5 standard errors of p_n."""
    generator = torch.Generator().manual_seed(3)
    draws = [schedule.sample(generator) for _ in range(20000)]
    assert min(draws) >= 1
    for n in range(1, 5):
        p = schedule.prob(n)
        frequency = sum(d == n for d in draws) / len(draws)
        assert abs(frequency - p) < 5 * math.sqrt(p * (1 - p) / len(draws))


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Geometric(1e-3, 1.0), "ratio"),
        (lambda: Geometric(1e-3, 0.0), "ratio"),
        (lambda: Zipf(1e-3, 2.0), "exponent"),
        (lambda: Geometric(0.0, 0.5), "mu"),
        (lambda: Zipf(-1.0, 3.0), "mu"),
        (lambda: make_schedule("uniform", 1e-3, 0.5, 3.0), "schedule"),
    ],
)
def test_non_summable_or_bad_schedules_fail_naming_the_argument(build, field: str) -> None:
    """A non-summable schedule (ratio 1, exponent <= 2), mu <= 0 or an unknown name: ValueError."""
    with pytest.raises(ValueError, match=f"^{field} must"):
        build()
