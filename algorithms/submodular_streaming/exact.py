"""Brute-force optimum over all showable item sets: the exact answer for tiny instances only."""

from __future__ import annotations

import itertools

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import expected_coverage
from optiforge.algorithms.submodular_streaming.matroid import blocks, is_showable
from optiforge.algorithms.submodular_streaming.stream import Stream
from optiforge.algorithms.submodular_streaming.validation import check_positive_int

MAX_ITEMS = 16


def brute_force_optimum(stream: Stream, k: int) -> float:
    """max f(S) over showable S; enumerates all subsets, so len(stream) <= MAX_ITEMS."""
    check_positive_int("k", k)
    if len(stream) > MAX_ITEMS:
        raise ValueError(f"stream length must be <= {MAX_ITEMS} for brute force, got {len(stream)}")
    item_blocks = blocks(stream)
    best = 0.0
    budget = min(len(stream), k * len(stream.visits))
    for size in range(1, budget + 1):
        for subset in itertools.combinations(range(len(stream)), size):
            ids = np.array(subset)
            if is_showable(item_blocks[ids], k, len(stream.visits)):
                best = max(best, expected_coverage(stream.probs[ids], stream.topics[ids]))
    return best
