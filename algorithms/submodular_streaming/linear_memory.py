"""The linear-memory adaptation: keep every unshown item, show the greedy best k at each visit.

Online greedy on the visit-slot matroid: each visit takes, one at a time, the held item of largest
marginal gain. Stale gains are upper bounds (coverage only grows), so a lazy heap (Minoux) serves
the visits without rescoring everything. Memory grows linearly with the stream.
"""

from __future__ import annotations

import heapq

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender


class LinearMemoryGreedy(StreamingRecommender):
    """Holds all unshown items; greedy k per visit."""

    def __init__(self, k: int, num_topics: int) -> None:
        super().__init__(k, num_topics)
        self.coverage = Coverage(num_topics)
        self.heap: list[tuple[float, int]] = []
        self.items: dict[int, tuple[float, np.ndarray]] = {}

    @property
    def memory(self) -> int:
        """Items held (every unshown one)."""
        return len(self.items)

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Keep the item with its current gain as heap key."""
        gain = self.coverage.gain(prob, topics)
        if gain > 0.0:
            self.items[item] = (prob, topics.copy())
            heapq.heappush(self.heap, (-gain, item))

    def visit(self) -> list[int]:
        """Lazy greedy: pop, rescore, take if still at least the next stale bound."""
        shown: list[int] = []
        while self.heap and len(shown) < self.k:
            _, item = heapq.heappop(self.heap)
            prob, topics = self.items[item]
            gain = self.coverage.gain(prob, topics)
            if gain <= 0.0:
                del self.items[item]
                continue
            if self.heap and gain < -self.heap[0][0]:
                heapq.heappush(self.heap, (-gain, item))
                continue
            self.coverage.add(prob, topics)
            del self.items[item]
            shown.append(item)
        return shown
