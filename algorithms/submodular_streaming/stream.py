"""A stream of items interleaved with user visits, and the seeded synthetic stream.

Items arrive in index order; visit j happens after `visits[j]` items have arrived, so it may show
only items 0 .. visits[j] - 1. Showing the item set S is feasible iff S can be assigned to visit
slots (k per visit) with each item after its arrival: a transversal matroid on the items. The
expected coverage depends only on the set shown, not on which visit showed what.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optiforge.algorithms.submodular_streaming.validation import check_items


@dataclass(frozen=True)
class Stream:
    """probs [n], topics [n, m] bool, visits [V] nondecreasing item counts in 0 .. n."""

    probs: np.ndarray
    topics: np.ndarray
    visits: np.ndarray

    def __post_init__(self) -> None:
        check_items(self.probs, self.topics)
        v = self.visits
        if v.ndim != 1 or len(v) < 1 or np.any(np.diff(v) < 0) or v[0] < 0 or v[-1] > len(self):
            raise ValueError(
                f"visits must be a nonempty nondecreasing array in [0, {len(self)}], got {v}"
            )

    def __len__(self) -> int:
        return int(self.probs.shape[0])

    @property
    def num_topics(self) -> int:
        """m, the number of topics."""
        return int(self.topics.shape[1])

    def prefix(self, n: int, visits: int | None = None) -> Stream:
        """The first n items and the visits among them (the first `visits` of those, if given)."""
        kept = self.visits[self.visits <= n][: visits if visits is not None else None]
        return Stream(self.probs[:n], self.topics[:n], kept)

    def with_visits(self, num_visits: int, seed: int) -> Stream:
        """The same items with `num_visits` visits at seeded uniformly random times."""
        return Stream(self.probs, self.topics, random_visits(len(self), num_visits, seed))


def random_visits(num_items: int, num_visits: int, seed: int) -> np.ndarray:
    """`num_visits` sorted visit times, each uniform over 1 .. num_items items arrived."""
    if num_visits < 1:
        raise ValueError(f"num_visits must be >= 1, got {num_visits}")
    return np.sort(np.random.default_rng(seed).integers(1, num_items + 1, size=num_visits))


def synthetic_stream(
    num_items: int = 5000,
    num_topics: int = 50,
    num_visits: int = 50,
    seed: int = 0,
    beta: tuple[float, float] = (0.5, 20.0),
    topics_per_item: tuple[int, int] = (1, 3),
    increasing: bool = False,
) -> Stream:
    """Items with p_i ~ Beta(a, b), uniform random topic sets of uniform size in the given range
    (inclusive), and visits at uniformly random times; one seed fixes everything. The default
    Beta(0.5, 20) (mean p 0.024) keeps 20-200 visits of k = 5 from covering every topic surely.
    `increasing` sorts the items by p_i |T_i|: the best arrive last (a hard order to stream)."""
    if num_topics < topics_per_item[1]:
        raise ValueError(f"num_topics must be >= {topics_per_item[1]}, got {num_topics}")
    if num_items < 1 or num_visits < 1:
        raise ValueError(f"num_items and num_visits must be >= 1, got {num_items}, {num_visits}")
    rng = np.random.default_rng(seed)
    probs = rng.beta(*beta, size=num_items)
    sizes = rng.integers(topics_per_item[0], topics_per_item[1] + 1, size=num_items)
    order = np.argsort(rng.random((num_items, num_topics)), axis=1)
    topics = np.zeros((num_items, num_topics), dtype=bool)
    chosen = order < sizes[:, None]
    topics[chosen] = True
    visits = random_visits(num_items, num_visits, seed)
    if increasing:
        order = np.argsort(probs * topics.sum(axis=1), kind="stable")
        probs, topics = probs[order], topics[order]
    return Stream(probs, topics, visits)
