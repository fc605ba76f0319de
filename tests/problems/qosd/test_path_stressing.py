"""problems/qosd/path_stressing.py: path stressing and pruning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.qosd import (
    EDGE_FUNCTIONS,
    SyntheticQoSDConfig,
    check_solution,
    generate_instance,
    perturbation_for_weight,
    prune,
    stress_paths,
)
from tests.problems.qosd.instances import diamond


@given(
    seed=st.integers(0, 10_000),
    function=st.sampled_from(EDGE_FUNCTIONS),
    model=st.sampled_from(["erdos_renyi", "barabasi_albert"]),
    rule=st.sampled_from(["greedy", "random"]),
)
def test_path_stressing_and_pruning_are_feasible_and_pruning_is_minimal(
    seed: int, function: str, model: str, rule: str
) -> None:
    """Stressed and pruned solutions are feasible; pruning is coordinate-wise minimal."""
    config = SyntheticQoSDConfig(
        graph_model=model, num_nodes=30, edge_probability=0.15, edge_function=function
    )
    instance = generate_instance(config, seed)
    stressed = stress_paths(instance, rule=rule, seed=seed)
    assert check_solution(instance, stressed).feasible
    pruned = prune(instance, stressed)
    assert check_solution(instance, pruned).feasible
    assert np.all(pruned <= stressed)
    # coordinate-wise minimal: lowering any perturbed edge by 1 % of T's weight breaks a pair
    for edge in np.flatnonzero(pruned > 1e-9):
        lowered = pruned.copy()
        weight = instance.weights(pruned[edge : edge + 1], np.array([edge]))
        lowered[edge] = perturbation_for_weight(
            function,
            instance.alpha[edge : edge + 1],
            instance.beta[edge : edge + 1],
            weight - 1e-3 * instance.threshold,
        )[0]
        assert not check_solution(instance, lowered).feasible


def test_path_stressing_continues_from_a_start_and_rejects_bad_ones() -> None:
    """Stressing continues from a start; bad start, rule or infeasible prune input raise."""
    instance = diamond()
    start = np.array([2.0, 0.0, 0.0, 0.0, 0.0])  # fixes the upper path only
    x = stress_paths(instance, start=start)
    assert x[0] == 2.0 and check_solution(instance, x).feasible
    with pytest.raises(ValueError, match="start must"):
        stress_paths(instance, start=np.full(5, 9.0))
    with pytest.raises(ValueError, match="rule must be one of"):
        stress_paths(instance, rule="best")
    with pytest.raises(ValueError, match="needs a feasible x"):
        prune(instance, np.zeros(5))
