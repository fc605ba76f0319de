"""Sieve-streaming (Badanidiyuru et al. 2014) adapted to on-demand visits.

The budget is K = k * visits_bound shown items. Sieves run in parallel, one per guess
v = (1 + epsilon)^i of the optimum in [m, 2 K m] (m = best single item so far); sieve v keeps an
item if its gain to the sieve's own set is at least (v / 2 - f(S_v)) / (K - |S_v|). At a visit the
sieve of largest value is asked for its k best unshown items (greedy given what was shown).
All sieves are scored at once: their survival vectors form one [sieves, m] matrix. Memory:
the distinct unshown items the sieves hold, O(K log K / epsilon).
"""

from __future__ import annotations

import math

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


class SieveStreaming(StreamingRecommender):
    """Sieves over guesses of OPT with grid ratio 1 + epsilon."""

    def __init__(self, k: int, num_topics: int, visits_bound: int, epsilon: float = 0.2) -> None:
        super().__init__(k, num_topics)
        check_positive_int("visits_bound", visits_bound)
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}")
        self.budget = k * visits_bound
        self.log_base = math.log1p(epsilon)
        self.coverage = Coverage(num_topics)
        self.exps = np.zeros(0, dtype=np.int64)
        self.q = np.ones((0, num_topics))
        self.value = np.zeros(0)
        self.members: list[list[int]] = []
        self.items: dict[int, tuple[float, np.ndarray]] = {}
        self.shown: set[int] = set()
        self.best_singleton = 0.0

    @property
    def memory(self) -> int:
        """Distinct unshown items held by some sieve."""
        return len(self.items)

    def _regrid(self) -> None:
        """Keep sieves with guesses in [m, 2 K m], open empty ones for new guesses."""
        low = math.ceil(math.log(self.best_singleton) / self.log_base)
        high = math.floor(math.log(2 * self.budget * self.best_singleton) / self.log_base)
        keep = self.exps >= low
        new = np.arange(max(low, int(self.exps.max(initial=low - 1)) + 1), high + 1)
        self.exps = np.concatenate([self.exps[keep], new])
        self.q = np.vstack([self.q[keep], np.ones((len(new), self.q.shape[1]))])
        self.value = np.concatenate([self.value[keep], np.zeros(len(new))])
        self.members = [m for m, kept in zip(self.members, keep, strict=True) if kept]
        self.members += [[] for _ in new]
        if not keep.all():
            held = {i for members in self.members for i in members}
            self.items = {i: row for i, row in self.items.items() if i in held}

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Offer the item to every sieve at once."""
        singleton = prob * float(topics.sum())
        if singleton <= 0.0:
            return
        if singleton > self.best_singleton:
            self.best_singleton = singleton
            self._regrid()
        sizes = np.array([len(m) for m in self.members])
        gains = prob * self.q[:, topics].sum(axis=1)
        guess = np.exp(self.exps * self.log_base)
        room = np.maximum(self.budget - sizes, 1)
        accept = np.flatnonzero((sizes < self.budget) & (gains >= (guess / 2 - self.value) / room))
        if len(accept) == 0:
            return
        self.q[np.ix_(accept, np.flatnonzero(topics))] *= 1.0 - prob
        self.value[accept] += gains[accept]
        for s in accept:
            self.members[s].append(item)
        self.items[item] = (prob, topics.copy())

    def visit(self) -> list[int]:
        """Greedy k unshown items of the best sieve, given what was shown."""
        if not self.members:
            return []
        best = int(np.argmax(self.value))
        ids = [i for i in self.members[best] if i not in self.shown]
        if not ids:
            return []
        probs = np.array([self.items[i][0] for i in ids])
        rows = np.stack([self.items[i][1] for i in ids])
        shown: list[int] = []
        for _ in range(min(self.k, len(ids))):
            gains = self.coverage.gains(probs, rows)
            j = int(np.argmax(gains))
            if gains[j] <= 0.0:
                break
            self.coverage.add(float(probs[j]), rows[j])
            shown.append(ids[j])
            probs[j] = 0.0
        for i in shown:
            self.shown.add(i)
            del self.items[i]
        return shown
