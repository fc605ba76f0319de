"""The visit-slot matroid: which item sets some schedule of the visits can show.

Item i may fill a slot of visit j iff it arrived before it (i < visits[j]); its block is the first
such visit. A set S is showable with k slots per visit iff, for every j, the items of S whose block
is >= j fit into the k (V - j) slots of visits j .. V - 1 (Hall's condition for nested
availability), which makes the showable sets a transversal matroid on the items.
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.submodular_streaming.stream import Stream


def blocks(stream: Stream) -> np.ndarray:
    """block[i] = the first visit item i can be shown at; V (= no visit) if none."""
    return np.searchsorted(stream.visits, np.arange(len(stream)), side="right")


def slack(item_blocks: np.ndarray, k: int, num_visits: int) -> np.ndarray:
    """slack[j] = k (V - j) - |{i : block_i >= j}| for j = 0 .. V - 1 (all >= 0 iff showable)."""
    counts = np.bincount(item_blocks, minlength=num_visits + 1)[: num_visits + 1]
    at_least = np.cumsum(counts[::-1])[::-1][:num_visits]
    return k * (num_visits - np.arange(num_visits)) - at_least


def is_showable(item_blocks: np.ndarray, k: int, num_visits: int) -> bool:
    """Whether items with these blocks fit the visits' slots (none may have block V)."""
    if np.any(item_blocks >= num_visits):
        return False
    return bool(np.all(slack(item_blocks, k, num_visits) >= 0))
