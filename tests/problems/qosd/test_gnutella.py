"""problems/qosd/gnutella.py: the Gnutella08 instance and its baselines."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.problems.qosd import (
    check_solution,
    load_gnutella08,
    prune,
    solve_linear_program,
    stress_paths,
)


def test_gnutella08_loads_and_its_baselines_are_feasible() -> None:
    """Gnutella08 loads with its sizes; greedy is feasible and above the LP; bad factor raises."""
    instance = load_gnutella08("linear")
    assert instance.num_nodes == 6301 and instance.num_edges == 20777
    assert len(instance.pairs) == 10
    unperturbed = instance.weights(np.zeros(instance.num_edges))
    assert np.allclose(unperturbed, instance.alpha + instance.beta)
    optimum = solve_linear_program(instance)
    greedy = prune(instance, stress_paths(instance))
    assert check_solution(instance, greedy).feasible
    assert optimum.budget <= greedy.sum() + 1e-7
    with pytest.raises(ValueError, match="not attainable within the caps"):
        load_gnutella08("log", threshold_factor=1.5)
