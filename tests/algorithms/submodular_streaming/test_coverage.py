"""Expected topic coverage and marginal gains against brute-force enumeration of outcomes."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.submodular_streaming import (
    Coverage,
    expected_coverage,
    marginal_gains,
    survival,
)


def tiny_items(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """n items over m topics; some probabilities are exactly 0 or 1."""
    rng = np.random.default_rng(seed)
    probs = rng.choice([0.0, 1.0, *rng.random(4)], size=n)
    return probs, rng.random((n, m)) < 0.5


def enumerated_coverage(probs: np.ndarray, topics: np.ndarray) -> float:
    """E[#topics consumed] by summing over all 2^n consumption outcomes."""
    total = 0.0
    for outcome in itertools.product((False, True), repeat=len(probs)):
        taken = np.array(outcome, dtype=bool)
        weight = np.prod(np.where(taken, probs, 1.0 - probs))
        total += weight * topics[taken].any(axis=0).sum()
    return total


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(1, 5))
def test_coverage_equals_enumeration(seed: int, n: int, m: int) -> None:
    """f(S) equals the expectation summed over every consumption outcome."""
    probs, topics = tiny_items(seed, n, m)
    assert np.isclose(expected_coverage(probs, topics), enumerated_coverage(probs, topics))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(1, 5))
def test_marginal_gains_equal_differences(seed: int, n: int, m: int) -> None:
    """p_i (T_i . q) equals f(S + i) - f(S) computed by enumeration, for every i outside S."""
    probs, topics = tiny_items(seed, n, m)
    chosen = np.arange(n) < n // 2
    base = enumerated_coverage(probs[chosen], topics[chosen])
    gains = marginal_gains(probs[~chosen], topics[~chosen], survival(probs[chosen], topics[chosen]))
    for gain, i in zip(gains, np.flatnonzero(~chosen), strict=True):
        with_i = chosen | (np.arange(n) == i)
        assert np.isclose(gain, enumerated_coverage(probs[with_i], topics[with_i]) - base)


def test_incremental_coverage_matches_batch() -> None:
    """Adding items one by one to Coverage gives the batch value and the batch gains."""
    probs, topics = tiny_items(3, 6, 4)
    coverage = Coverage(4)
    for p, row in zip(probs[:4], topics[:4], strict=True):
        coverage.add(float(p), row)
    assert np.isclose(coverage.value, expected_coverage(probs[:4], topics[:4]))
    expected = marginal_gains(probs[4:], topics[4:], survival(probs[:4], topics[:4]))
    assert np.allclose(coverage.gains(probs[4:], topics[4:]), expected)


def test_known_value() -> None:
    """Two items on one topic with p = 0.5 each cover it with probability 0.75."""
    topics = np.array([[True, False], [True, True]])
    assert np.isclose(expected_coverage(np.array([0.5, 0.5]), topics), 0.75 + 0.5)
