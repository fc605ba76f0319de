"""The online protocol: a recommender sees items one at a time and answers visits on demand.

`run` replays a Stream: `observe(item, prob, topics)` for each arriving item, `visit()` at each
user visit, which must return at most k ids of items already observed, never shown before. The
recommender keeps what it wants; `memory` is the number of items it holds (its memory cost).
Every answer is checked (validate_schedule) before the coverage is reported.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import expected_coverage
from optiforge.algorithms.submodular_streaming.stream import Stream
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


class StreamingRecommender(ABC):
    """Base of the streaming algorithms: k items per visit over m topics."""

    def __init__(self, k: int, num_topics: int) -> None:
        check_positive_int("k", k)
        check_positive_int("num_topics", num_topics)
        self.k = k
        self.num_topics = num_topics

    @abstractmethod
    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Item `item` arrives with consumption probability `prob` and topics bool [m]."""

    @abstractmethod
    def visit(self) -> list[int]:
        """A user visits: the ids (at most k) to show now."""

    @property
    @abstractmethod
    def memory(self) -> int:
        """Items held right now."""


@dataclass(frozen=True)
class RunResult:
    """What a run showed and what it cost: shown ids per visit, coverage, peak items held,
    seconds per item (observe and visit time over the stream length)."""

    shown: list[list[int]]
    coverage: float
    peak_memory: int
    seconds_per_item: float


def validate_schedule(stream: Stream, shown: list[list[int]], k: int) -> None:
    """Raise unless each visit shows <= k distinct earlier-arrived items, none shown twice."""
    if len(shown) != len(stream.visits):
        raise ValueError(f"{len(shown)} answers for {len(stream.visits)} visits")
    seen: set[int] = set()
    for j, (ids, arrived) in enumerate(zip(shown, stream.visits, strict=True)):
        if len(ids) > k or any(not 0 <= i < arrived for i in ids) or seen.intersection(ids):
            raise ValueError(f"visit {j} shows {ids}: need <= {k} new items below {arrived}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"visit {j} shows an item twice: {ids}")
        seen.update(ids)


def run(stream: Stream, recommender: StreamingRecommender) -> RunResult:
    """Replay `stream` through `recommender`; validate the answers; measure coverage, memory."""
    shown: list[list[int]] = []
    peak = 0
    next_visit = 0
    start = time.perf_counter()
    for item in range(len(stream) + 1):
        while next_visit < len(stream.visits) and stream.visits[next_visit] == item:
            shown.append([int(i) for i in recommender.visit()])
            next_visit += 1
        if item < len(stream):
            recommender.observe(item, float(stream.probs[item]), stream.topics[item])
            peak = max(peak, recommender.memory)
    seconds = (time.perf_counter() - start) / max(len(stream), 1)
    validate_schedule(stream, shown, recommender.k)
    ids = np.array(sorted({i for visit in shown for i in visit}), dtype=int)
    value = expected_coverage(stream.probs[ids], stream.topics[ids]) if len(ids) else 0.0
    return RunResult(shown, value, peak, seconds)
