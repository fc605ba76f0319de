"""Offline greedy on the whole stream: the reference every streaming method is measured against.

Lazy greedy (Minoux) over all items under the visit-slot matroid: take the item of largest
marginal gain among those that keep the set showable. Matroid greedy is a 1/2-approximation of
the optimum; with a single visit the matroid is uniform (cardinality k) and the bound is 1 - 1/e.
It knows the whole stream and all visit times, so no online algorithm can be asked to beat it.
"""

from __future__ import annotations

import heapq

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.matroid import blocks, slack
from optiforge.algorithms.submodular_streaming.stream import Stream
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


def offline_greedy(stream: Stream, k: int) -> tuple[np.ndarray, float]:
    """(chosen item ids, their expected coverage) of greedy under the visit-slot matroid."""
    check_positive_int("k", k)
    num_visits = len(stream.visits)
    item_blocks = blocks(stream)
    room = slack(np.zeros(0, dtype=int), k, num_visits)
    coverage = Coverage(stream.num_topics)
    initial = stream.probs * stream.topics.sum(axis=1)
    heap = [(-g, i) for i, g in enumerate(initial) if item_blocks[i] < num_visits and g > 0]
    heapq.heapify(heap)
    chosen: list[int] = []
    full = num_visits  # the smallest j with room[j] == 0: blocks >= full no longer fit
    while heap and full > 0:
        _, i = heapq.heappop(heap)
        b = item_blocks[i]
        if b >= full:
            continue  # its slots are taken for good: room only shrinks
        gain = coverage.gain(float(stream.probs[i]), stream.topics[i])
        if heap and gain < -heap[0][0]:
            heapq.heappush(heap, (-gain, i))
            continue
        if gain <= 0.0:
            break
        chosen.append(i)
        coverage.add(float(stream.probs[i]), stream.topics[i])
        room[: b + 1] -= 1
        zero = np.flatnonzero(room[: b + 1] == 0)
        if len(zero):
            full = min(full, int(zero[0]))
    return np.array(sorted(chosen), dtype=int), coverage.value
