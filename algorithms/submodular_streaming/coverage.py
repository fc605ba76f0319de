"""Expected topic coverage: f(S) = sum_t (1 - prod_{i in S, t in T_i} (1 - p_i)).

Item i is consumed with probability p_i independently of the others and covers topics T_i
(a row of a boolean incidence matrix). f is monotone submodular; the marginal gain of i given
the per-topic survival q_t = prod_{j in S, t in T_j} (1 - p_j) is p_i * sum_{t in T_i} q_t.
Everything is vectorised over topics (and over items where many are scored at once).
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.validation import check_items


def survival(probs: np.ndarray, topics: np.ndarray) -> np.ndarray:
    """q_t = prod over the given items covering t of (1 - p_i); probs [n], topics [n, m] bool."""
    check_items(probs, topics)
    certain = probs == 1.0
    log_keep = np.log1p(-np.where(certain, 0.0, probs))
    exact_zero = (topics & certain[:, None]).any(axis=0)
    q = np.exp(topics.astype(np.float64).T @ log_keep)
    q[exact_zero] = 0.0
    return q


def expected_coverage(probs: np.ndarray, topics: np.ndarray) -> float:
    """f(S) for the items S given as probs [n] and topics [n, m]: expected number of topics
    consumed at least once."""
    return float((1.0 - survival(probs, topics)).sum())


def marginal_gains(probs: np.ndarray, topics: np.ndarray, q: np.ndarray) -> np.ndarray:
    """f(S + i) - f(S) for every row i, given the survival q [m] of S: p_i * (T_i . q)."""
    return probs * (topics.astype(np.float64) @ q)


class Coverage:
    """The survival vector q [m] of the items shown so far, updated one item at a time."""

    def __init__(self, num_topics: int) -> None:
        self.q = np.ones(num_topics)

    @property
    def value(self) -> float:
        """f of the items added so far."""
        return float((1.0 - self.q).sum())

    def gain(self, prob: float, topics: np.ndarray) -> float:
        """Marginal gain of one item (topics: bool [m])."""
        return float(prob * self.q[topics].sum())

    def gains(self, probs: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """Marginal gains of many items at once (probs [c], topics [c, m])."""
        return marginal_gains(probs, topics, self.q)

    def add(self, prob: float, topics: np.ndarray) -> None:
        """Add one item: q_t *= (1 - p) on its topics."""
        self.q[topics] *= 1.0 - prob
