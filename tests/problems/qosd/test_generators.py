"""problems/qosd/generators.py: synthetic instance generation."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.problems.qosd import SyntheticQoSDConfig, generate_instance
from optiforge.problems.qosd.checker import pair_distances


def test_generated_instances_are_reproducible_and_need_perturbation() -> None:
    """Instances repeat per seed, start below the threshold, convert to Data; bad model raises."""
    config = SyntheticQoSDConfig(num_nodes=50, edge_probability=0.08, edge_function="quadratic")
    first, second = generate_instance(config, 7), generate_instance(config, 7)
    assert np.array_equal(first.edge_index, second.edge_index)
    assert np.array_equal(first.pairs, second.pairs) and first.threshold == second.threshold
    assert np.all(pair_distances(first, np.zeros(first.num_edges)) < first.threshold)
    data = first.to_data()
    assert data.edge_index.shape == (2, first.num_edges) and data.num_nodes == 50
    with pytest.raises(ValueError, match="graph_model must be one of"):
        SyntheticQoSDConfig(graph_model="grid")
