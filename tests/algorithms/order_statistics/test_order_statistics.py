"""Extreme order statistics: closed forms vs the integrator vs the Monte Carlo, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.order_statistics import (
    Exponential,
    NearExtremal,
    Pareto,
    expected_order_statistic,
    exponential_expected,
    pareto_expected,
    sample_top,
    summarize_top,
)


def test_closed_forms_on_hand_computed_cases() -> None:
    """E[max of 2 Exp(1)] = 3/2; E[min of 2 Pareto(2)] = 4/3; the max of one sample is its mean."""
    assert exponential_expected(Exponential(), 2, 1) == pytest.approx(1.5, rel=1e-12)
    assert exponential_expected(Exponential(rate=2.0), 1, 1) == pytest.approx(0.5, rel=1e-12)
    assert pareto_expected(Pareto(2.0), 2, 2) == pytest.approx(4.0 / 3.0, rel=1e-12)
    assert pareto_expected(Pareto(2.0), 1, 1) == pytest.approx(2.0, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 10**12),
    st.integers(1, 4),
    st.sampled_from([1.0, 0.5, 3.0]),
    st.sampled_from([1.2, 1.5, 3.0]),
)
def test_integrator_matches_closed_forms(n: int, rank: int, rate: float, alpha: float) -> None:
    """The numerical integral equals the exponential and Pareto closed forms to 1e-7."""
    rank = min(rank, n)
    exponential = Exponential(rate=rate)
    pareto = Pareto(alpha)
    assert expected_order_statistic(exponential, n, rank) == pytest.approx(
        exponential_expected(exponential, n, rank), rel=1e-7
    )
    assert expected_order_statistic(pareto, n, rank) == pytest.approx(
        pareto_expected(pareto, n, rank), rel=1e-7
    )


@pytest.mark.parametrize("family", [Exponential(), Pareto(3.0)], ids=lambda f: f.name)
@pytest.mark.parametrize(("n", "rank"), [(1, 1), (10, 2), (1000, 3), (10**7, 2)])
def test_monte_carlo_matches_closed_forms(family: Exponential | Pareto, n: int, rank: int) -> None:
    """The spacings Monte Carlo mean of every X_(k), k <= rank, is within 4 standard errors."""
    closed = exponential_expected if isinstance(family, Exponential) else pareto_expected
    summary = summarize_top(family, n, rank, trials=40_000, seed=3)
    for k in range(1, rank + 1):
        assert abs(summary.mean[k - 1] - closed(family, n, k)) < 4 * summary.stderr[k - 1]


def test_spacings_match_sorted_samples() -> None:
    """The top-3 drawn by spacings have the means of the top-3 of explicitly sorted samples."""
    family = NearExtremal(0.5)
    rng = np.random.default_rng(0)
    explicit = np.sort(family.isf(rng.random((20_000, 40))), axis=1)[:, ::-1][:, :3]
    spacings = sample_top(family, 40, 3, 20_000, np.random.default_rng(1))
    assert np.all(np.diff(spacings, axis=1) <= 0)
    for k in (1, 2):  # X_(1) of this tail has infinite variance: compare k = 2, 3
        both = np.concatenate([explicit[:, k], spacings[:, k]])
        error = both.std() * math.sqrt(2 / 20_000)
        assert abs(explicit[:, k].mean() - spacings[:, k].mean()) < 4 * error


def test_near_extremal_tail_is_inverted_and_has_its_mean() -> None:
    """isf inverts S, S(e^e) = 1, and E[X_(1)] at n = 1 is the mean e^e + c / delta."""
    family = NearExtremal(0.5)
    u = np.array([1.0, 0.3, 1e-3, 1e-12, 1e-20])
    assert np.allclose(family.survival(family.isf(u)), u, rtol=1e-10)
    assert family.survival(math.exp(math.e)) == pytest.approx(1.0)
    mean = math.exp(math.e) + family.c / family.delta
    assert expected_order_statistic(family, 1, 1) == pytest.approx(mean, rel=1e-8)


def test_near_extremal_growth_matches_the_paper() -> None:
    """E[X_(1)] / n falls with n, and E[X_(2)] log n (log log n)^1.5 / n stays within 2x."""
    family = NearExtremal(0.5)
    sizes = [10**3, 10**5, 10**7, 10**9]
    max_over_n = [expected_order_statistic(family, n, 1) / n for n in sizes]
    assert all(a > b for a, b in zip(max_over_n[:-1], max_over_n[1:], strict=True))
    scaled = [
        expected_order_statistic(family, n, 2) * math.log(n) * math.log(math.log(n)) ** 1.5 / n
        for n in sizes
    ]
    assert max(scaled) / min(scaled) < 2.0


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: expected_order_statistic(Exponential(), 5, 6), "rank"),
        (lambda: expected_order_statistic(Exponential(), 5, 0), "rank"),
        (lambda: expected_order_statistic(Exponential(), 0, 1), "n"),
        (lambda: summarize_top(Exponential(), 3, 4, 10, 0), "rank"),
        (lambda: sample_top(Exponential(), 3, 1, 0, np.random.default_rng(0)), "trials"),
        (lambda: NearExtremal(0.0), "delta"),
        (lambda: NearExtremal(-1.0), "delta"),
        (lambda: Pareto(1.0), "alpha"),
        (lambda: Exponential(rate=0.0), "rate"),
    ],
)
def test_bad_input_fails_by_name(call: object, field: str) -> None:
    """rank > n or < 1, n < 1, trials < 1, delta <= 0, alpha <= 1, rate <= 0 fail by name."""
    with pytest.raises(ValueError, match=rf"^{field}: "):
        call()  # type: ignore[operator]
