"""The linear-memory adaptation: keep every unshown item, show the greedy best k at each visit.

Online greedy on the visit-slot matroid: each visit takes, one at a time, the held item of largest
marginal gain. Stale gains are upper bounds (coverage only grows), so a lazy heap (Minoux) serves
the visits without rescoring everything. Memory grows linearly with the stream; it is
1/2-competitive (docs). Given a `capacity`, it is the sublinear-memory version of the same
adaptation: past the cap it drops the held item of smallest gain when last scored, which can crowd
every slot with copies of one strong item (no bounded ratio; the benchmark shows it).
"""

from __future__ import annotations

import heapq

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


class LinearMemoryGreedy(StreamingRecommender):
    """Holds all unshown items (or the `capacity` of largest gain); greedy k per visit."""

    def __init__(self, k: int, num_topics: int, capacity: int | None = None) -> None:
        super().__init__(k, num_topics)
        if capacity is not None:
            check_positive_int("capacity", capacity)
        self.capacity = capacity
        self.coverage = Coverage(num_topics)
        self.heap: list[tuple[float, int]] = []
        self.weakest: list[tuple[float, int]] = []  # (gain when scored, item): eviction order
        self.items: dict[int, tuple[float, np.ndarray]] = {}

    @property
    def memory(self) -> int:
        """Items held (every unshown one, or at most `capacity`)."""
        return len(self.items)

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Keep the item with its current gain as heap key; past the cap, drop the weakest."""
        gain = self.coverage.gain(prob, topics)
        if gain <= 0.0:
            return
        self.items[item] = (prob, topics.copy())
        heapq.heappush(self.heap, (-gain, item))
        if self.capacity is None:
            return
        heapq.heappush(self.weakest, (gain, item))
        while len(self.items) > self.capacity:
            _, dropped = heapq.heappop(self.weakest)
            self.items.pop(dropped, None)  # entries of shown items are skipped
        if len(self.heap) + len(self.weakest) > 8 * self.capacity:
            self._rebuild()

    def _rebuild(self) -> None:
        """Drop the heap entries of items no longer held (keeps the capped memory bounded)."""
        self.heap = [(-self.coverage.gain(p, t), i) for i, (p, t) in self.items.items()]
        self.weakest = [(-key, i) for key, i in self.heap]
        heapq.heapify(self.heap)
        heapq.heapify(self.weakest)

    def visit(self) -> list[int]:
        """Lazy greedy: pop, rescore, take if still at least the next stale bound."""
        shown: list[int] = []
        while self.heap and len(shown) < self.k:
            _, item = heapq.heappop(self.heap)
            if item not in self.items:
                continue  # dropped past the cap
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
