"""Our on-demand recommender: its proved ratio against brute force, its lists, its memory cap."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.submodular_streaming import (
    OnDemandStreaming,
    Stream,
    SwapPoolStreaming,
    brute_force_optimum,
    duplicates_stream,
    proved_ratio,
    run,
    synthetic_stream,
)

PROBS = (0.05, 0.3, 0.5, 0.8, 0.95, 1.0)


@st.composite
def small_instances(draw: st.DrawFn) -> tuple[Stream, int, int, float]:
    """(stream of <= 9 items with repeated probabilities and burst visits, k, bound, delta)."""
    n = draw(st.integers(2, 9))
    m = draw(st.integers(1, 4))
    probs = np.array(draw(st.lists(st.sampled_from(PROBS), min_size=n, max_size=n)))
    cells = draw(st.lists(st.booleans(), min_size=n * m, max_size=n * m))
    topics = np.array(cells, dtype=bool).reshape(n, m)
    visits = np.sort(draw(st.lists(st.integers(1, n), min_size=1, max_size=4)))
    bound = len(visits) + draw(st.integers(0, 3))
    return (
        Stream(probs, topics, visits),
        draw(st.integers(1, 2)),
        bound,
        draw(st.sampled_from([1.0, 1.5, 2.0, 4.0, 8.0])),
    )


@settings(max_examples=150, deadline=None)
@given(small_instances())
def test_ratio_to_brute_force_optimum_is_at_least_the_proved_bound(
    instance: tuple[Stream, int, int, float],
) -> None:
    """f(shown) >= OPT / (1 + s + max(0, kV/c - 1)) >= OPT / (s + delta) on every instance."""
    stream, k, bound, delta = instance
    method = OnDemandStreaming(k, stream.num_topics, bound, delta)
    value = run(stream, method).coverage
    optimum = brute_force_optimum(stream, k)
    s = max(int(stream.topics.sum(axis=1).max()), 1)
    exact = method.proved_ratio(s, len(stream.visits))
    assert exact >= 1.0 / (s + delta) - 1e-12
    assert value >= exact * optimum - 1e-9


def test_proved_ratio_hand_values() -> None:
    """1/(1+s) when the lists hold k V items; 1/(s + delta) at V = bound; kV/c - 1 in between."""
    assert proved_ratio(1, 10, 1, 10) == 0.5  # s = 1, c = kV: online greedy's 1/2
    assert math.isclose(proved_ratio(3, 5, 5, 2), 1.0 / 5.0)  # kV/c = 2
    assert math.isclose(proved_ratio(2, 4, 1, 2), 1.0 / 3.0)  # c > kV: no list runs dry
    method = OnDemandStreaming(5, 50, 200, delta=2.0)
    assert method.per_topic == 500
    assert math.isclose(method.proved_ratio(3), 1.0 / 5.0)
    assert math.isclose(method.proved_ratio(3, num_visits=100), 1.0 / 4.0)


def test_the_bound_is_not_vacuous_the_swap_pool_breaks_it() -> None:
    """On copies of a sure item then weaker items on other topics, the swap pool ends below our
    bound for it (OPT = 1 + 4 x 0.8 by hand), while ours reaches OPT."""
    stream = duplicates_stream(num_topics=6, k=1, num_visits=5, visits_bound=5)
    optimum = brute_force_optimum(stream, 1)
    assert math.isclose(optimum, 1.0 + 4 * 0.8)
    bound = OnDemandStreaming(1, 6, 5, delta=2.0).proved_ratio(1)
    assert math.isclose(bound, 1.0 / (2.0 + 5 / 3 - 1.0))
    assert run(stream, SwapPoolStreaming(1, 6, 5)).coverage < bound * optimum
    assert math.isclose(run(stream, OnDemandStreaming(1, 6, 5)).coverage, optimum)


def test_lists_hold_the_top_probabilities_of_each_topic() -> None:
    """Before any visit the held items are exactly the c most probable items of each topic."""
    stream = synthetic_stream(400, 8, 1, seed=3)
    method = OnDemandStreaming(2, 8, 5, delta=2.0)  # c = 5
    for i in range(len(stream)):
        method.observe(i, float(stream.probs[i]), stream.topics[i])
    expected = set()
    for t in range(8):
        covering = np.flatnonzero(stream.topics[:, t])
        expected |= set(covering[np.argsort(-stream.probs[covering])[:5]].tolist())
    assert set(method.slot) == expected
    assert method.memory <= 8 * 5


def test_memory_is_capped_by_topics_times_list_length_on_10x_longer_streams() -> None:
    """Peak items held <= m c = 20 x 30 on 2 000 and 20 000 items."""
    for length in (2000, 20_000):
        stream = synthetic_stream(length, 20, 10, seed=1)
        assert run(stream, OnDemandStreaming(3, 20, 20, delta=2.0)).peak_memory <= 20 * 30


def test_the_list_keeps_the_more_probable_item() -> None:
    """One topic, p = 0.3 then 0.8, one visit, c = 1: ours shows 0.8 = OPT; a first-come list
    would show 0.3, below the bound 1/(1 + 1 + 0) x 0.8 = 0.4, so the bound needs the ordering."""
    stream = Stream(np.array([0.3, 0.8]), np.ones((2, 1), dtype=bool), np.array([2]))
    method = OnDemandStreaming(1, 1, 2, delta=2.0)
    assert method.per_topic == 1
    assert run(stream, method).shown == [[1]]
    assert method.proved_ratio(1, 1) * brute_force_optimum(stream, 1) > 0.3
