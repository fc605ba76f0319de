"""Adversarial streams: the baselines without a guarantee fall towards 0, ours stays above its
proved bound (checked against OPT <= 2 x offline greedy, the matroid greedy bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optiforge.algorithms.submodular_streaming import (
    KnownVisitsSwap,
    LinearMemoryGreedy,
    OnDemandStreaming,
    Stream,
    SwapPoolStreaming,
    SwapStreaming,
    burst_stream,
    duplicates_stream,
    offline_greedy,
    run,
    worst_first_stream,
)

K, TOPICS, VISITS, BOUND = 3, 20, 8, 40


def ratio(stream: Stream, method: object) -> float:
    """Coverage of the method's answers over offline greedy's."""
    return run(stream, method).coverage / offline_greedy(stream, K)[1]  # type: ignore[arg-type]


def ours_stays_above_its_bound(stream: Stream) -> float:
    """Our ratio to greedy; asserts f(ours) >= bound x 2 greedy >= bound x OPT."""
    method = OnDemandStreaming(K, TOPICS, BOUND, delta=2.0)
    value = ratio(stream, method)
    s = int(stream.topics.sum(axis=1).max())
    assert value >= 2.0 * method.proved_ratio(s, len(stream.visits))
    return value


def test_worst_first_with_fewer_visits_than_the_bound() -> None:
    """Known-visits given the bound shows the worst items (< 0.02); ours >= its bound."""
    stream = worst_first_stream(TOPICS, K, VISITS, BOUND)
    assert len(stream) == K * BOUND and np.all(np.diff(stream.probs) > 0)
    assert ratio(stream, KnownVisitsSwap(K, TOPICS, BOUND)) < 0.02
    assert ratio(stream, SwapStreaming(K, TOPICS)) < 0.35
    assert ours_stays_above_its_bound(stream) > 0.95


def test_duplicates_crowd_out_the_methods_that_ignore_what_they_hold() -> None:
    """Capped linear memory, the swap pool and known-visits show only the sure item: 1 of
    OPT = 1 + 19 x 0.8 + 4 x 0.8 x 0.2 (by hand: 24 slots, 19 other topics); ours does not."""
    stream = duplicates_stream(TOPICS, K, VISITS, BOUND)
    optimum = 1.0 + 19 * 0.8 + 4 * 0.8 * 0.2
    assert math.isclose(offline_greedy(stream, K)[1], optimum)
    capped = LinearMemoryGreedy(K, TOPICS, capacity=K * BOUND)
    for method in (capped, SwapPoolStreaming(K, TOPICS, BOUND), KnownVisitsSwap(K, TOPICS, BOUND)):
        assert math.isclose(ratio(stream, method), 1.0 / optimum)
    assert ratio(stream, LinearMemoryGreedy(K, TOPICS)) >= 0.5  # uncapped: 1/2-competitive
    assert ours_stays_above_its_bound(stream) > 0.95


def test_bursts_starve_the_one_visit_pool() -> None:
    """Two bursts of 4 visits: swap streaming serves about one visit per burst; ours >= bound."""
    stream = burst_stream(1000, TOPICS, VISITS, 2, seed=0)
    assert len(np.unique(stream.visits)) == 2
    assert ratio(stream, SwapStreaming(K, TOPICS)) < 0.6
    assert ours_stays_above_its_bound(stream) > 0.9


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: worst_first_stream(5, 2, 4, 3), "visits_bound"),
        (lambda: duplicates_stream(1, 2, 2, 2), "num_topics"),
        (lambda: burst_stream(100, 5, 3, 4), "num_bursts"),
    ],
)
def test_bad_sizes_name_the_field(make: object, field: str) -> None:
    """A bound below the visits, one topic for duplicates, more bursts than visits: one line."""
    with pytest.raises(ValueError, match=field):
        make()  # type: ignore[operator]
