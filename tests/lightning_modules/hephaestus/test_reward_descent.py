"""Refine's reward descent: feasible, never above its start, bounded below by the LP optimum,
and close to it on linear instances where pruned greedy is 10-30 % above."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.lightning_modules.hephaestus.reward_descent import descend_reward
from optiforge.problems.qosd import SyntheticQoSDConfig, check_solution, generate_instance
from optiforge.problems.qosd.linear_program import solve_linear_program
from optiforge.problems.qosd.path_stressing import prune, stress_paths


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), function=st.sampled_from(["linear", "quadratic", "log"]))
def test_descent_is_feasible_and_never_above_its_start(seed: int, function: str) -> None:
    """Reward descent from greedy stays feasible, never above greedy, never below the LP."""
    config = SyntheticQoSDConfig(num_nodes=25, edge_probability=0.15, edge_function=function)
    instance = generate_instance(config, seed)
    greedy = prune(instance, stress_paths(instance))
    x = descend_reward(instance, greedy, steps=20, repair_every=10)
    assert check_solution(instance, x).feasible
    assert x.sum() <= greedy.sum() + 1e-9
    if function == "linear":
        assert x.sum() >= solve_linear_program(instance).x.sum() - 1e-6


def test_descent_reaches_the_lp_optimum_within_five_percent() -> None:
    """Seeded 100-node linear instances: greedy 1.14-1.34x LP; the descent lands within 1.05x
    (measured 1.00-1.04 when written)."""
    for seed in (1000, 1002, 1004):
        instance = generate_instance(SyntheticQoSDConfig(edge_function="linear"), seed)
        optimum = solve_linear_program(instance).x.sum()
        greedy = prune(instance, stress_paths(instance))
        x = descend_reward(instance, greedy)
        assert greedy.sum() > 1.1 * optimum  # the instance leaves room to improve
        assert check_solution(instance, x).feasible
        assert x.sum() <= 1.05 * optimum


def test_bad_arguments_are_rejected() -> None:
    """Non-positive steps or repair_every and an infeasible or short start are rejected."""
    instance = generate_instance(SyntheticQoSDConfig(num_nodes=20, edge_probability=0.2), 0)
    start = instance.cap.copy()
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        descend_reward(instance, start, steps=0)
    with pytest.raises(ValueError, match="repair_every must be a positive integer"):
        descend_reward(instance, start, repair_every=0)
    with pytest.raises(ValueError, match="start must be a feasible perturbation"):
        descend_reward(instance, 0 * start)
    with pytest.raises(ValueError, match="start must be a feasible perturbation"):
        descend_reward(instance, start[:-1])
