"""Streaming greedy with swaps (Chakrabarti and Kale) holding just one visit's worth of items.

Holds at most k items; an arriving item fills a free slot or replaces the weakest held item when
its marginal gain (given what was shown) is at least `swap_factor` times that item's weight. A
visit shows everything held and empties the pool. Memory k; for a single visit this is the
classical 1/4-approximate swap algorithm for a cardinality constraint (swap factor 2).
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.pool import ItemPool
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender


class SwapStreaming(StreamingRecommender):
    """k items per visit, swap when the newcomer is swap_factor times better."""

    def __init__(self, k: int, num_topics: int, swap_factor: float = 2.0) -> None:
        super().__init__(k, num_topics)
        if not swap_factor >= 1.0:
            raise ValueError(f"swap_factor must be >= 1, got {swap_factor!r}")
        self.swap_factor = swap_factor
        self.coverage = Coverage(num_topics)
        self.pool = ItemPool(k, num_topics)

    @property
    def memory(self) -> int:
        """Items held (at most k)."""
        return self.pool.size

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Fill a free slot or swap out the weakest item."""
        gain = self.coverage.gain(prob, topics)
        if gain <= 0.0:
            return
        slot = self.pool.free_slot()
        if slot < 0:
            slot = self.pool.weakest()
            if gain < self.swap_factor * self.pool.weight[slot]:
                return
        self.pool.put(slot, item, prob, topics, gain)

    def visit(self) -> list[int]:
        """Show all held items (greedy order) and empty the pool."""
        return self.pool.greedy_show(self.coverage, self.k)
