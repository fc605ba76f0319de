"""A shared swap pool for on-demand visits: a baseline with no proved guarantee.

Our first reading of the abstract of Wang, Tu, Oettershagen and Gionis (arXiv 2601.10901), kept as
a baseline; the recommender we prove a ratio for is `OnDemandStreaming` (on_demand.py). It:

- holds one shared pool of at most k * visits_bound items (never more, however long the stream);
- scores an arriving item by its marginal gain given the items shown so far;
- drops it if the gain is below best_singleton / (delta * k * visits_bound) (a sieve threshold:
  all items that weak together add at most a 1/delta fraction of the best single item per slot);
- else stores it in a free slot, or swaps out the weakest held item if its gain is at least
  delta times that item's weight (Chakrabarti-Kale style swap, with delta as the swap factor);
- at a visit shows the k held items greedily by marginal gain and forgets them.

No item is committed to a particular future visit, so visits that never happen cost nothing. Its
weights ignore what the pool already holds, so copies of one strong item can fill the pool and
crowd out every other topic: on such streams its ratio falls towards 0 (benchmark, tests).
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.pool import ItemPool
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


class SwapPoolStreaming(StreamingRecommender):
    """k items per visit, at most visits_bound visits expected, swap / threshold factor delta."""

    def __init__(self, k: int, num_topics: int, visits_bound: int, delta: float = 2.0) -> None:
        super().__init__(k, num_topics)
        check_positive_int("visits_bound", visits_bound)
        if not delta >= 1.0:
            raise ValueError(f"delta must be >= 1, got {delta!r}")
        self.delta = delta
        self.coverage = Coverage(num_topics)
        self.pool = ItemPool(k * visits_bound, num_topics)
        self.best_singleton = 0.0

    @property
    def memory(self) -> int:
        """Items held in the pool."""
        return self.pool.size

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Threshold, then store or swap (see the module docstring)."""
        self.best_singleton = max(self.best_singleton, prob * float(topics.sum()))
        gain = self.coverage.gain(prob, topics)
        if gain <= 0.0 or gain < self.best_singleton / (self.delta * self.pool.capacity):
            return
        slot = self.pool.free_slot()
        if slot < 0:
            slot = self.pool.weakest()
            if gain < self.delta * self.pool.weight[slot]:
                return
        self.pool.put(slot, item, prob, topics, gain)

    def visit(self) -> list[int]:
        """Show the k best held items (greedy on marginal gain) and forget them."""
        return self.pool.greedy_show(self.coverage, self.k)
