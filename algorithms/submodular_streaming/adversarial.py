"""Adversarial streams: each one defeats a baseline that has no guarantee with only a visits bound.

- `worst_first_stream`: one topic per item, probabilities rising geometrically along the stream,
  k * visits_bound items, then all `num_visits` (fewer than the bound) visits at the end. The
  known-visits adaptation given the bound parks the first (worst) items in the slots of the
  visits that happen and the best in slots of visits that never come.
- `duplicates_stream`: k * visits_bound copies of one strong item, then as many weaker items
  spread over the other topics, then all visits at the end. Methods whose weights ignore what
  they already hold (the capped linear-memory greedy, the swap pool, known-visits) keep copies.
- `burst_stream`: a synthetic stream whose visits come in `num_bursts` bursts of equal size at
  random times. Swap streaming, holding one visit's worth, serves one visit per burst.
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.stream import Stream, synthetic_stream
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


def _check(num_topics: int, k: int, num_visits: int, visits_bound: int) -> None:
    """Positive sizes and num_visits <= visits_bound."""
    for name, value in (("num_topics", num_topics), ("k", k), ("num_visits", num_visits)):
        check_positive_int(name, value)
    if (
        isinstance(visits_bound, bool)
        or not isinstance(visits_bound, int)
        or visits_bound < num_visits
    ):
        raise ValueError(
            f"visits_bound must be an integer >= num_visits = {num_visits}, got {visits_bound!r}"
        )


def worst_first_stream(
    num_topics: int,
    k: int,
    num_visits: int,
    visits_bound: int,
    seed: int = 0,
    probs: tuple[float, float] = (0.001, 0.9),
) -> Stream:
    """k * visits_bound single-topic items (uniform random topic), p rising geometrically from
    probs[0] to probs[1] in stream order, all visits after the last item."""
    _check(num_topics, k, num_visits, visits_bound)
    n = k * visits_bound
    rng = np.random.default_rng(seed)
    p = np.geomspace(probs[0], probs[1], n)
    topics = np.zeros((n, num_topics), dtype=bool)
    topics[np.arange(n), rng.integers(0, num_topics, size=n)] = True
    return Stream(p, topics, np.full(num_visits, n))


def duplicates_stream(
    num_topics: int,
    k: int,
    num_visits: int,
    visits_bound: int,
    strong: float = 1.0,
    weak: float = 0.8,
) -> Stream:
    """k * visits_bound copies of an item on topic 0 with p = strong, then k * visits_bound items
    with p = weak cycling over topics 1 .. m - 1, all visits after the last item."""
    _check(num_topics, k, num_visits, visits_bound)
    if num_topics < 2:
        raise ValueError(f"num_topics must be >= 2 for duplicates, got {num_topics}")
    copies = k * visits_bound
    topics = np.zeros((2 * copies, num_topics), dtype=bool)
    topics[:copies, 0] = True
    topics[np.arange(copies, 2 * copies), 1 + np.arange(copies) % (num_topics - 1)] = True
    p = np.concatenate([np.full(copies, strong), np.full(copies, weak)])
    return Stream(p, topics, np.full(num_visits, 2 * copies))


def burst_stream(
    num_items: int, num_topics: int, num_visits: int, num_bursts: int, seed: int = 0
) -> Stream:
    """The synthetic stream of this seed with its visits in `num_bursts` equal bursts (the last
    takes the remainder), each at a uniformly random time."""
    check_positive_int("num_bursts", num_bursts)
    if num_bursts > num_visits:
        raise ValueError(f"num_bursts must be <= num_visits = {num_visits}, got {num_bursts}")
    stream = synthetic_stream(num_items, num_topics, num_visits, seed)
    times = np.sort(np.random.default_rng(seed + 1).integers(1, num_items + 1, size=num_bursts))
    sizes = np.full(num_bursts, num_visits // num_bursts)
    sizes[-1] += num_visits - sizes.sum()
    return Stream(stream.probs, stream.topics, np.repeat(times, sizes))
