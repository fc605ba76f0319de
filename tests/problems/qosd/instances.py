"""Tiny QoSD instances shared by the tests of problems/qosd (a helper module, not a test file)."""

from __future__ import annotations

import numpy as np

from optiforge.problems.qosd import QoSDInstance

# A diamond 0 -> {1, 2} -> 3 plus a long direct edge 0 -> 3: two two-edge paths (weights 2 each)
DIAMOND = np.array([[0, 0, 1, 2, 0], [1, 2, 3, 3, 3]])


def diamond(threshold: float = 3.0, function: str = "linear", cap=None) -> QoSDInstance:
    cap = np.full(5, 4.0) if cap is None else np.asarray(cap, dtype=float)
    return QoSDInstance(
        num_nodes=4,
        edge_index=DIAMOND,
        alpha=np.array([0.5, 0.5, 0.5, 0.5, 4.0]),
        beta=np.array([0.5, 0.5, 0.5, 0.5, 1.0]),
        cap=cap,
        pairs=np.array([[0, 3]]),
        threshold=threshold,
        edge_function=function,
    )
