"""Our on-demand recommender with a proved competitive ratio: per-topic lists, greedy visits.

Our own design, not the algorithm of arXiv 2601.10901 (whose text we could not read). For every
topic t it keeps a list L_t of at most c = ceil(k * visits_bound / delta) unshown items covering
t, the ones of largest consumption probability p among those seen (an arriving item joins L_t
when the list has room or when its p beats the list's smallest, which is then dropped from L_t).
It holds an item while some list does. At a visit it shows, k times, the held item of largest
marginal gain given everything shown, and takes shown items out of the lists.

Why lists by p: an item o dropped from L_t leaves c items covering t with p >= p_o behind, and
that count only falls when one of them is shown. So at any later moment either one of them is
still held, and its gain beats o's gain on topic t, or c of them were shown, and then topic t is
covered so well that o adds at most (coverage of t) / c there. This gives (docs, "Our
guarantee"): with s = max |T_i| and V <= visits_bound visits,

    f(shown) >= OPT / (1 + s + max(0, k V / c - 1)) >= OPT / (s + delta),

OPT being the best showable set with the whole stream and all visit times known. Memory: at
most num_topics * c items, whatever the stream length.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from optiforge.algorithms.submodular_streaming.coverage import Coverage
from optiforge.algorithms.submodular_streaming.protocol import StreamingRecommender
from optiforge.algorithms.submodular_streaming.validation import check_positive_int


def proved_ratio(max_topics: int, per_topic: int, k: int, num_visits: int) -> float:
    """Our competitive ratio 1 / (1 + s + max(0, k V / c - 1)) for s = max_topics topics per
    item, lists of c = per_topic items, k items per visit and V = num_visits visits."""
    return 1.0 / (1.0 + max_topics + max(0.0, k * num_visits / per_topic - 1.0))


class OnDemandStreaming(StreamingRecommender):
    """k items per visit, at most visits_bound visits; lists of ceil(k visits_bound / delta)."""

    def __init__(self, k: int, num_topics: int, visits_bound: int, delta: float = 2.0) -> None:
        super().__init__(k, num_topics)
        check_positive_int("visits_bound", visits_bound)
        if not delta >= 1.0:
            raise ValueError(f"delta must be >= 1, got {delta!r}")
        self.visits_bound = visits_bound
        self.per_topic = math.ceil(k * visits_bound / delta)
        self.coverage = Coverage(num_topics)
        self.lists: list[list[tuple[float, int]]] = [[] for _ in range(num_topics)]  # min-heaps
        self.lists_of: dict[int, set[int]] = {}  # held item -> topics whose list holds it
        self.slot: dict[int, int] = {}  # held item -> row of probs / rows
        self.free: list[int] = []
        self.probs = np.zeros(0)
        self.rows = np.zeros((0, num_topics), dtype=bool)

    def proved_ratio(self, max_topics: int, num_visits: int | None = None) -> float:
        """Our bound for items of at most `max_topics` topics and `num_visits` visits
        (default: the visits bound, the worst case); at least 1 / (max_topics + delta)."""
        visits = self.visits_bound if num_visits is None else num_visits
        return proved_ratio(max_topics, self.per_topic, self.k, visits)

    @property
    def memory(self) -> int:
        """Items held (in at least one list)."""
        return len(self.slot)

    def _hold(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Store the item's probability and topic row in a free row (growing the arrays)."""
        if not self.free:
            old = len(self.probs)
            size = max(2 * old, 64)
            self.probs = np.concatenate([self.probs, np.zeros(size - old)])
            self.rows = np.vstack([self.rows, np.zeros((size - old, self.num_topics), bool)])
            self.free = list(range(size - 1, old - 1, -1))
        row = self.free.pop()
        self.probs[row], self.rows[row] = prob, topics
        self.slot[item] = row

    def _leave(self, item: int, topic: int) -> None:
        """The item is no longer in L_topic; forget it when no list holds it."""
        self.lists_of[item].discard(topic)
        if not self.lists_of[item]:
            del self.lists_of[item]
            self.free.append(self.slot.pop(item))

    def observe(self, item: int, prob: float, topics: np.ndarray) -> None:
        """Offer the item to the list of each of its topics (see the module docstring)."""
        if prob <= 0.0:
            return  # its gain is 0 whatever is shown
        joined: set[int] = set()
        for t in np.flatnonzero(topics):
            heap = self.lists[t]
            if len(heap) < self.per_topic:
                heapq.heappush(heap, (prob, item))
            elif prob > heap[0][0]:
                _, dropped = heapq.heapreplace(heap, (prob, item))
                self._leave(dropped, int(t))
            else:
                continue
            joined.add(int(t))
        if joined:
            self.lists_of[item] = joined
            self._hold(item, prob, topics)

    def visit(self) -> list[int]:
        """Greedy: k times the held item of largest marginal gain given all shown items."""
        if not self.slot:
            return []
        items = np.fromiter(self.slot, dtype=np.int64, count=len(self.slot))
        rows = np.fromiter(self.slot.values(), dtype=np.int64, count=len(self.slot))
        probs, cover = self.probs[rows], self.rows[rows].astype(np.float64)
        shown: list[int] = []
        for _ in range(min(self.k, len(rows))):
            gains = probs * (cover @ self.coverage.q)
            best = int(np.argmax(gains))
            if gains[best] <= 0.0:
                break
            item, row = int(items[best]), int(rows[best])
            self.coverage.add(float(self.probs[row]), self.rows[row])
            probs[best] = 0.0  # shown: never again
            shown.append(item)
            for t in list(self.lists_of[item]):
                self.lists[t].remove((float(self.probs[row]), item))
                heapq.heapify(self.lists[t])
                self._leave(item, t)
        return shown
