"""Streaming recommenders: memory bounds on 10x longer streams, seeded reruns, protocol checks."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.algorithms.submodular_streaming import (
    KnownVisitsSwap,
    LinearMemoryGreedy,
    OnDemandStreaming,
    SieveStreaming,
    Stream,
    SwapStreaming,
    offline_greedy,
    run,
    synthetic_stream,
    validate_schedule,
)


@pytest.mark.parametrize("length", [1000, 10_000])
def test_memory_bounds_hold_on_10x_longer_streams(length: int) -> None:
    """Bounded methods hold <= their cap on n and 10 n items; linear memory grows with n."""
    stream = synthetic_stream(length, 20, 10, seed=1)
    k, bound = 3, 20
    assert run(stream, OnDemandStreaming(k, 20, bound)).peak_memory <= 20 * k * bound // 2
    assert run(stream, SwapStreaming(k, 20)).peak_memory <= k
    assert run(stream, KnownVisitsSwap(k, 20, bound)).peak_memory <= k * bound
    assert run(stream, LinearMemoryGreedy(k, 20)).peak_memory >= length // 2


def test_sieve_memory_does_not_scale_with_length() -> None:
    """Sieve-streaming's items held grow far slower than the stream (10x longer, < 3x held)."""
    short = run(synthetic_stream(1000, 20, 10, seed=2), SieveStreaming(3, 20, 10)).peak_memory
    long = run(synthetic_stream(10_000, 20, 10, seed=2), SieveStreaming(3, 20, 10)).peak_memory
    assert long < 3 * short


def test_seeded_streams_and_runs_reproduce() -> None:
    """The same seed gives the same stream and the same answers; another seed does not."""
    a, b = synthetic_stream(500, 10, 5, seed=7), synthetic_stream(500, 10, 5, seed=7)
    assert np.array_equal(a.probs, b.probs) and np.array_equal(a.topics, b.topics)
    assert np.array_equal(a.visits, b.visits)
    assert not np.array_equal(a.probs, synthetic_stream(500, 10, 5, seed=8).probs)
    assert run(a, OnDemandStreaming(2, 10, 5)).shown == run(b, OnDemandStreaming(2, 10, 5)).shown
    assert np.array_equal(a.with_visits(9, 3).visits, b.with_visits(9, 3).visits)


def test_on_demand_does_not_park_items_for_visits_that_never_come() -> None:
    """With a visits bound of 2 and one visit, known-visits parks the best item for visit 2."""
    probs = np.array([0.2, 0.9])
    topics = np.array([[True, False], [False, True]])
    stream = Stream(probs, topics, np.array([2]))
    assert run(stream, KnownVisitsSwap(1, 2, 2)).shown == [[0]]
    assert run(stream, OnDemandStreaming(1, 2, 2)).shown == [[1]]


def test_streaming_stays_below_twice_offline_greedy() -> None:
    """Every method's (validated) answer is at most OPT <= 2 x offline greedy (matroid greedy)."""
    stream = synthetic_stream(2000, 20, 15, seed=4)
    _, reference = offline_greedy(stream, 3)
    for method in (OnDemandStreaming(3, 20, 30), SieveStreaming(3, 20, 30), SwapStreaming(3, 20)):
        result = run(stream, method)
        assert 0.0 < result.coverage <= 2.0 * reference


def test_validate_schedule_rejects_unarrived_and_repeated_items() -> None:
    """Showing an item before it arrives, twice, or more than k at once is refused."""
    stream = Stream(np.full(4, 0.5), np.ones((4, 2), dtype=bool), np.array([2, 4]))
    validate_schedule(stream, [[0, 1], [2, 3]], 2)
    with pytest.raises(ValueError, match="visit 0"):
        validate_schedule(stream, [[2], []], 2)
    with pytest.raises(ValueError, match="visit 1"):
        validate_schedule(stream, [[0], [0]], 2)
    with pytest.raises(ValueError, match="visit 0"):
        validate_schedule(stream, [[0, 1, 1], []], 3)
    with pytest.raises(ValueError, match="visit 1"):
        validate_schedule(stream, [[0], [1, 2, 3]], 2)
