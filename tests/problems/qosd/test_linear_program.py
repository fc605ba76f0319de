"""problems/qosd/linear_program.py: the exact LP for linear edge functions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.qosd import (
    SyntheticQoSDConfig,
    check_solution,
    generate_instance,
    prune,
    solve_linear_program,
    stress_paths,
)
from tests.problems.qosd.instances import diamond


def test_linear_program_on_the_diamond_is_the_hand_optimum() -> None:
    """LP on the diamond gives the hand optimum 4; a non-linear edge function is refused."""
    # each two-edge path needs +1 weight = +2 budget (slope 0.5); the direct edge has 5 >= 3
    result = solve_linear_program(diamond())
    assert result.budget == pytest.approx(4.0, abs=1e-8)
    assert check_solution(diamond(), result.x).feasible
    with pytest.raises(ValueError, match="needs edge_function 'linear'"):
        solve_linear_program(diamond(function="log"))


@given(seed=st.integers(0, 10_000), model=st.sampled_from(["erdos_renyi", "barabasi_albert"]))
def test_linear_program_is_a_lower_bound_on_every_heuristic(seed: int, model: str) -> None:
    """The LP optimum is feasible and its budget is below greedy and random stressing."""
    config = SyntheticQoSDConfig(graph_model=model, num_nodes=40, edge_probability=0.1)
    instance = generate_instance(config, seed)
    optimum = solve_linear_program(instance)
    assert check_solution(instance, optimum.x).feasible
    for rule in ("greedy", "random"):
        heuristic = prune(instance, stress_paths(instance, rule=rule))
        assert optimum.budget <= heuristic.sum() + 1e-7
