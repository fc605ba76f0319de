"""A fixed-capacity pool of held items (ids, probs, topic rows, weights) and greedy display.

Preallocated arrays so that holding, evicting and scoring items costs no per-topic Python loop;
`greedy_show` is the visit-time step shared by the bounded-memory recommenders.
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage


class ItemPool:
    """Up to `capacity` items; `weight` is each item's gain when it was last scored."""

    def __init__(self, capacity: int, num_topics: int) -> None:
        self.ids = np.full(capacity, -1, dtype=np.int64)
        self.probs = np.zeros(capacity)
        self.rows = np.zeros((capacity, num_topics), dtype=bool)
        self.weight = np.full(capacity, np.inf)  # empty slots never look like the weakest
        self.size = 0

    @property
    def capacity(self) -> int:
        """Slots in the pool."""
        return int(self.ids.shape[0])

    def put(self, slot: int, item: int, prob: float, topics: np.ndarray, weight: float) -> None:
        """Store an item in `slot` (overwriting what was there)."""
        if self.ids[slot] < 0:
            self.size += 1
        self.ids[slot], self.probs[slot], self.rows[slot], self.weight[slot] = (
            item,
            prob,
            topics,
            weight,
        )

    def free_slot(self) -> int:
        """An empty slot (-1 if the pool is full)."""
        empty = np.flatnonzero(self.ids < 0)
        return int(empty[0]) if len(empty) else -1

    def weakest(self) -> int:
        """The occupied slot of least weight (the pool must not be empty)."""
        return int(np.argmin(np.where(self.ids >= 0, self.weight, np.inf)))

    def remove(self, slots: np.ndarray) -> None:
        """Empty the given slots."""
        self.size -= int((self.ids[slots] >= 0).sum())
        self.ids[slots] = -1
        self.weight[slots] = np.inf

    def rescore(self, coverage: Coverage) -> None:
        """Weights := current marginal gains given what has been shown."""
        held = self.ids >= 0
        self.weight[held] = coverage.gains(self.probs[held], self.rows[held])

    def greedy_show(self, coverage: Coverage, k: int) -> list[int]:
        """Greedily pick up to k held items by marginal gain, add them to `coverage`, drop them
        from the pool and return their ids (items with zero gain are not shown)."""
        picked: list[int] = []
        held = np.flatnonzero(self.ids >= 0)
        for _ in range(min(k, len(held))):
            gains = coverage.gains(self.probs[held], self.rows[held])
            best = int(np.argmax(gains))
            if gains[best] <= 0.0:
                break
            slot = held[best]
            coverage.add(float(self.probs[slot]), self.rows[slot])
            picked.append(int(self.ids[slot]))
            self.remove(np.array([slot]))
            held = np.delete(held, best)
        self.rescore(coverage)
        return picked
