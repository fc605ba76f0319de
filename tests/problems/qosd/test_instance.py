"""problems/qosd/instance.py: QoSDInstance input checks."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.problems.qosd import QoSDInstance
from tests.problems.qosd.instances import diamond


def test_bad_instances_are_rejected_with_the_field_named() -> None:
    """Bad caps, threshold, function, graph or beta are rejected, naming the field."""
    with pytest.raises(ValueError, match="cap must be >= 0"):
        diamond(cap=[4, 4, -1, 4, 4])
    with pytest.raises(ValueError, match="not attainable within the caps"):
        diamond(threshold=100.0)
    with pytest.raises(ValueError, match="edge_function must be one of"):
        diamond(function="cubic")
    with pytest.raises(ValueError, match="threshold must be"):
        diamond(threshold=-1.0)
    base = dict(
        num_nodes=4,
        alpha=np.ones(2),
        beta=np.ones(2),
        cap=np.ones(2),
        threshold=1.0,
    )
    with pytest.raises(ValueError, match="unreachable"):
        QoSDInstance(edge_index=np.array([[0, 2], [1, 3]]), pairs=np.array([[0, 3]]), **base)
    with pytest.raises(ValueError, match="parallel edges"):
        QoSDInstance(edge_index=np.array([[0, 0], [1, 1]]), pairs=np.array([[0, 1]]), **base)
    with pytest.raises(ValueError, match="self-loops"):
        QoSDInstance(edge_index=np.array([[0, 1], [1, 1]]), pairs=np.array([[0, 1]]), **base)
    with pytest.raises(ValueError, match="beta must be > 0"):
        QoSDInstance(
            edge_index=np.array([[0, 1], [1, 2]]),
            pairs=np.array([[0, 2]]),
            **(base | {"beta": np.array([1.0, 0.0])}),
        )
