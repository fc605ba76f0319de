"""Offline greedy: feasible, and within its guarantee of the brute-force optimum."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.submodular_streaming import (
    Stream,
    brute_force_optimum,
    expected_coverage,
    offline_greedy,
)
from optiforge.algorithms.submodular_streaming.matroid import blocks, is_showable


def tiny_stream(seed: int, n: int, m: int, visits: int) -> Stream:
    """A random tiny stream with `visits` visits at random times."""
    rng = np.random.default_rng(seed)
    probs = rng.random(n)
    topics = rng.random((n, m)) < 0.4
    return Stream(probs, topics, np.sort(rng.integers(1, n + 1, size=visits)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 8), st.integers(1, 5), st.integers(1, 3))
def test_single_visit_greedy_is_within_1_minus_1_over_e(seed: int, n: int, m: int, k: int) -> None:
    """One visit after the whole stream is a cardinality constraint: greedy >= (1 - 1/e) OPT."""
    stream = tiny_stream(seed, n, m, 1)
    stream = Stream(stream.probs, stream.topics, np.array([n]))
    _, value = offline_greedy(stream, k)
    assert value >= (1.0 - 1.0 / math.e) * brute_force_optimum(stream, k) - 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 8), st.integers(1, 4), st.integers(1, 3))
def test_multi_visit_greedy_is_showable_and_within_half(
    seed: int, n: int, m: int, visits: int
) -> None:
    """Under the visit-slot matroid greedy is showable, >= OPT / 2, and reports f(S) truly."""
    stream = tiny_stream(seed, n, m, visits)
    ids, value = offline_greedy(stream, 1)
    assert is_showable(blocks(stream)[ids], 1, visits)
    truth = expected_coverage(stream.probs[ids], stream.topics[ids]) if len(ids) else 0.0
    assert np.isclose(value, truth)
    assert value >= 0.5 * brute_force_optimum(stream, 1) - 1e-9


def test_slots_follow_arrivals() -> None:
    """Items arriving after the last visit are never chosen; early visits cap early items."""
    probs = np.array([0.9, 0.9, 0.9, 0.9])
    topics = np.eye(4, dtype=bool)
    stream = Stream(probs, topics, np.array([1, 3]))
    ids, value = offline_greedy(stream, 1)
    assert 3 not in ids and len(ids) == 2 and ids[0] == 0
    assert np.isclose(value, 1.8)
