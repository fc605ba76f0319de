"""The known-visits adaptation: Chakrabarti-Kale swaps on the partition matroid of visit slots.

With the number of visits V known, visit j owns k slots and the matroid is a partition matroid
with one part per visit: an arriving item takes the earliest free slot of a visit still to come,
or replaces the weakest item in those slots when its gain is at least `swap_factor` times that
item's weight; visit j shows exactly what its slots hold. Memory k V. Given only an upper bound
V' > V, items parked in the slots of visits that never happen are lost: no bounded ratio.
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.pool import ItemPool
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


class KnownVisitsSwap(StreamingRecommender):
    """k items per visit for exactly `num_visits` visits (extra visits are shown nothing)."""

    def __init__(self, k: int, num_topics: int, num_visits: int, swap_factor: float = 2.0) -> None:
        super().__init__(k, num_topics)
        check_positive_int("num_visits", num_visits)
        if not swap_factor >= 1.0:
            raise ValueError(f"swap_factor must be >= 1, got {swap_factor!r}")
        self.swap_factor = swap_factor
        self.coverage = Coverage(num_topics)
        self.pool = ItemPool(k * num_visits, num_topics)
        self.current = 0  # index of the next visit

    @property
    def memory(self) -> int:
        """Items parked in the slots of future visits."""
        return self.pool.size

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Park the item in a future visit's slot, by free slot or by swap."""
        first = self.current * self.k
        if first >= self.pool.capacity:
            return
        gain = self.coverage.gain(prob, topics)
        if gain <= 0.0:
            return
        future = self.pool.ids[first:]
        empty = np.flatnonzero(future < 0)
        if len(empty):
            slot = first + int(empty[0])
        else:
            slot = first + int(np.argmin(self.pool.weight[first:]))
            if gain < self.swap_factor * self.pool.weight[slot]:
                return
        self.pool.put(slot, item, prob, topics, gain)

    def visit(self) -> list[int]:
        """Show the current visit's slots and move on to the next visit."""
        slots = np.arange(self.current * self.k, (self.current + 1) * self.k)
        self.current += 1
        if slots[0] >= self.pool.capacity:
            return []
        slots = slots[self.pool.ids[slots] >= 0]
        shown = [int(i) for i in self.pool.ids[slots]]
        for slot in slots:
            self.coverage.add(float(self.pool.probs[slot]), self.pool.rows[slot])
        self.pool.remove(slots)
        self.pool.rescore(self.coverage)
        return shown
