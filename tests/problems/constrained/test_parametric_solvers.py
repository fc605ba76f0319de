"""Parametric solvers (set up once, updated per instance) against the from-scratch reference."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.problems.constrained import ConstrainedFamily, make_family, solve_reference
from optiforge.problems.constrained.parametric_solvers import solve_parametric

SMALL = {"num_vars": 12, "num_eq": 6, "num_ineq": 6}


def family(name: str) -> ConstrainedFamily:
    return make_family(name, **SMALL, seed=5)


def relative_gap(objectives: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return (objectives - reference) / np.abs(reference)


@pytest.mark.parametrize(
    ("name", "solver", "tolerance"),
    [
        ("convex_qp", "osqp", 1e-9),
        ("convex_qp", "clarabel", None),
        ("convex_qcqp", "cvxpy", None),
        ("convex_socp", "cvxpy", None),
        ("nonconvex_qp", "slsqp", 1e-12),
    ],
)
def test_same_optimum_as_the_reference(name: str, solver: str, tolerance: float | None) -> None:
    """Every instance feasible and at the reference's objective (1e-6 relative)."""
    problem = family(name)
    x = problem.sample_parameters(6, seed=1)
    reference = solve_reference(problem, x)
    run = solve_parametric(problem, x, solver, tolerance, warm_start=False)
    assert reference.accepted.all() and run.solutions.accepted.all()
    gap = relative_gap(run.solutions.objectives, reference.objectives)
    assert np.abs(gap).max() < 1e-6
    assert run.solutions.solve_times.shape == (6,) and run.wall_seconds > 0


def test_warm_start_keeps_the_convex_optimum() -> None:
    """OSQP from the previous instance's solution: a different path, the same optimum."""
    problem = family("convex_qp")
    x = problem.sample_parameters(8, seed=2)
    warm = solve_parametric(problem, x, "osqp", 1e-9, warm_start=True)
    cold = solve_parametric(problem, x, "osqp", 1e-9, warm_start=False)
    assert warm.solutions.accepted.all() and cold.solutions.accepted.all()
    gap = relative_gap(warm.solutions.objectives, cold.solutions.objectives)
    assert np.abs(gap).max() < 1e-6


def test_warm_start_on_a_nonconvex_family_finds_other_local_optima() -> None:
    """SLSQP warm-started from another instance's solution stays feasible but may stop at
    another local optimum (why the benchmark reports cold starts next to warm ones)."""
    problem = family("nonconvex_qp")
    x = problem.sample_parameters(8, seed=2)
    warm = solve_parametric(problem, x, "slsqp", 1e-12, warm_start=True)
    cold = solve_parametric(problem, x, "slsqp", 1e-12, warm_start=False)
    assert warm.solutions.accepted.all() and cold.solutions.accepted.all()
    gap = relative_gap(warm.solutions.objectives, cold.solutions.objectives)
    assert np.abs(gap[0]) < 1e-9  # the first instance has no previous solution: same start
    assert np.abs(gap).max() > 1e-3


def test_loose_tolerance_reaches_its_gap() -> None:
    """Clarabel at 1e-3 stays feasible and within 1e-3 of the optimum (the matched setting)."""
    problem = family("convex_qp")
    x = problem.sample_parameters(6, seed=3)
    reference = solve_reference(problem, x)
    loose = solve_parametric(problem, x, "clarabel", 1e-3)
    assert loose.solutions.accepted.all()
    gap = relative_gap(loose.solutions.objectives, reference.objectives)
    assert (gap > -1e-6).all() and gap.mean() <= 1e-3


def test_two_processes_match_one() -> None:
    """Chunks solved in two processes give the one-process optimum."""
    problem = family("convex_qp")
    x = problem.sample_parameters(4, seed=4)
    single = solve_parametric(problem, x, "osqp", 1e-9)
    split = solve_parametric(problem, x, "osqp", 1e-9, workers=2)
    assert split.workers == 2 and split.solutions.accepted.all()
    gap = relative_gap(split.solutions.objectives, single.solutions.objectives)
    assert np.abs(gap).max() < 1e-6


@pytest.mark.parametrize(
    ("name", "kwargs", "field"),
    [
        ("convex_qp", {"solver": "gurobi"}, "solver must be one of"),
        ("convex_qcqp", {"solver": "osqp"}, "takes QP families only"),
        ("nonconvex_qp", {"solver": "clarabel"}, "needs a convex family"),
        ("convex_qp", {"solver": "osqp", "tolerance": 0.0}, "tolerance must be"),
        ("convex_qp", {"solver": "osqp", "tolerance": 2.0}, "tolerance must be"),
        ("convex_qp", {"solver": "osqp", "workers": 0}, "workers must be"),
    ],
)
def test_bad_arguments_fail_by_name(name: str, kwargs: dict, field: str) -> None:
    """Unknown solvers, solvers that cannot take the family, bad tolerances or workers."""
    problem = family(name)
    with pytest.raises(ValueError, match=field):
        solve_parametric(problem, problem.sample_parameters(2, seed=0), **kwargs)
