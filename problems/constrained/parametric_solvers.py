"""Reference solvers used at their best on a parametric family: set up once, updated per instance.

A user who solves many instances that differ only in x (the right-hand side of A y = x) does
not rebuild the problem each time. Here every solver is set up once per family and only the
parameter changes between instances:

- "osqp" (convex QP families): OSQP set up once on P = Q, q = p and the stacked constraint rows
  [A; G; I (box)]; per instance only the bounds of the equality rows change (l = u = x), so the
  KKT factorization is reused, and OSQP starts from the previous instance's primal and dual
  solution (`warm_start`). Solution polishing on.
- "clarabel" (convex QP families): Clarabel's own API with its data-update call: only b changes,
  so the symbolic analysis and the matrix structure are reused. An interior-point method has no
  warm start; `warm_start` does not apply.
- "cvxpy" (convex QCQP / SOCP families, also QPs): cvxpy with x as a `Parameter`, so the problem
  is DPP and canonicalized once (the first solve), then Clarabel solves each instance.
- "slsqp" (nonconvex and nonsmooth families, any family): SLSQP with the autograd objective
  gradient and the family's closed-form inequality Jacobian; with `warm_start` it starts from
  the previous instance's solution moved onto the new equality set (y + A^+ (x - A y)), and
  falls back to the A^+ x start if that start fails the check. IPOPT (cyipopt) is not used:
  PyPI has only its source, which needs a system IPOPT library that this project cannot install
  through pip.

`tolerance` is the solver's own stopping tolerance (None: the solver's default: OSQP 1e-3 absolute
and relative, Clarabel 1e-8, SLSQP ftol 1e-6); every point still goes through the independent
check of `reference_solvers.check_points` and is flagged when it violates the constraints by more
than `FEASIBILITY_TOLERANCE`. `workers` > 1 splits the instances into contiguous chunks solved in
that many processes, each with its own set-up (the pool is started and warmed before the clock
starts, as a long-running service would keep it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from optiforge.problems.constrained.family import ConstrainedFamily
from optiforge.problems.constrained.linear import LinearInequalityFamily
from optiforge.problems.constrained.reference_solvers import (
    FEASIBILITY_TOLERANCE,
    ReferenceSolutions,
    check_points,
    cvxpy_problem,
    slsqp_problem,
)

PARAMETRIC_SOLVERS = ("osqp", "clarabel", "cvxpy", "slsqp")
OSQP_MAX_ITER = 200_000


@dataclass(frozen=True)
class ParametricRun:
    """Checked solutions plus the batch's wall time (set-up included) and the set-up time alone."""

    solutions: ReferenceSolutions
    wall_seconds: float
    setup_seconds: float
    workers: int


def solve_parametric(
    family: ConstrainedFamily,
    x: Tensor,
    solver: str,
    tolerance: float | None = None,
    warm_start: bool = True,
    workers: int = 1,
) -> ParametricRun:
    """Solve every instance x [N, num_eq] with one set-up of `solver`; checked as the reference."""
    check_parametric_solver(family, solver, tolerance, workers)
    family.check_parameters(x)
    parameters = x.detach().cpu().double().numpy()
    chunks = np.array_split(np.arange(len(parameters)), workers)
    cpu_family = family.to("cpu")
    start = time.perf_counter()
    if workers == 1:
        parts = [_solve_chunk(cpu_family, parameters, solver, tolerance, warm_start)]
    else:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            list(pool.map(_warm_up, range(workers)))
            start = time.perf_counter()
            jobs = [
                pool.submit(_solve_chunk, cpu_family, parameters[c], solver, tolerance, warm_start)
                for c in chunks
            ]
            parts = [job.result() for job in jobs]
    wall = time.perf_counter() - start
    points = np.vstack([part[0] for part in parts])
    success = np.concatenate([part[1] for part in parts])
    times = np.concatenate([part[2] for part in parts])
    setup = max(part[3] for part in parts)
    check = check_points(family, x, points)
    solutions = ReferenceSolutions(
        solver=solver,
        tolerance=FEASIBILITY_TOLERANCE,
        solutions=points,
        objectives=check.objectives,
        max_eq_violation=check.max_eq_violation,
        max_ineq_violation=check.max_ineq_violation,
        solver_success=success,
        feasible=check.feasible(FEASIBILITY_TOLERANCE),
        solve_times=times,
    )
    return ParametricRun(solutions, wall, setup, workers)


def check_parametric_solver(
    family: ConstrainedFamily, solver: str, tolerance: float | None, workers: int
) -> None:
    """Reject unknown solvers, solvers that cannot take the family, bad tolerances or workers."""
    if solver not in PARAMETRIC_SOLVERS:
        raise ValueError(f"solver must be one of {PARAMETRIC_SOLVERS}, got {solver!r}")
    if solver != "slsqp" and not family.is_convex:
        raise ValueError(
            f"solver {solver!r} needs a convex family; {family.name!r} is not convex: use 'slsqp'"
        )
    if solver in ("osqp", "clarabel") and not isinstance(family, LinearInequalityFamily):
        raise ValueError(
            f"solver {solver!r} takes QP families only; {family.name!r} is not one: use 'cvxpy'"
        )
    if tolerance is not None and not (isinstance(tolerance, float) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must be None or a float in (0, 1), got {tolerance!r}")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")


def _warm_up(_: int) -> None:
    """Import what the workers need before the clock starts."""
    import clarabel  # noqa: F401
    import cvxpy  # noqa: F401
    import osqp  # noqa: F401


InstanceSolve = Callable[[np.ndarray], tuple[np.ndarray | None, bool]]


def _solve_chunk(
    family: ConstrainedFamily,
    parameters: np.ndarray,
    solver: str,
    tolerance: float | None,
    warm_start: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Set the solver up once, then solve the rows of `parameters` in order."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    builders = {"osqp": _osqp, "clarabel": _clarabel, "cvxpy": _cvxpy, "slsqp": _slsqp}
    solve_one = builders[solver](family, tolerance, warm_start)
    setup = time.perf_counter() - start
    points = np.full((len(parameters), family.num_vars), np.nan)
    success = np.zeros(len(parameters), dtype=bool)
    times = np.zeros(len(parameters))
    for index, row in enumerate(parameters):
        start = time.perf_counter()
        point, success[index] = solve_one(row)
        times[index] = time.perf_counter() - start
        if point is not None:
            points[index] = point
    return points, success, times, setup


def _qp_rows(family: ConstrainedFamily) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """Inequality rows [G; I; -I] (box rows only with a box) as M y <= bound."""
    data = family.arrays()
    rows, bounds = [data["G"]], [data["h"]]
    if family.box_bound is not None:
        identity = np.eye(family.num_vars)
        rows += [identity, -identity]
        bounds += [np.full(2 * family.num_vars, family.box_bound)]
    return sp.csc_matrix(np.vstack(rows)), np.concatenate(bounds), data["A"]


def _osqp(family: ConstrainedFamily, tolerance: float | None, warm_start: bool) -> InstanceSolve:
    """OSQP on [A; M] with l = u = x on the equality rows, updated per instance."""
    import osqp

    data = family.arrays()
    inequality, bound, A = _qp_rows(family)
    matrix = sp.vstack([sp.csc_matrix(A), inequality], format="csc")
    lower = np.concatenate([np.zeros(family.num_eq), np.full(len(bound), -np.inf)])
    upper = np.concatenate([np.zeros(family.num_eq), bound])
    settings = {"verbose": False, "polishing": True, "warm_starting": warm_start}
    settings["max_iter"] = OSQP_MAX_ITER
    if tolerance is not None:
        settings |= {"eps_abs": tolerance, "eps_rel": tolerance}
    solver = osqp.OSQP()
    P = sp.triu(sp.csc_matrix(data["Q"]), format="csc")
    solver.setup(P, data["p"], matrix, lower, upper, **settings)

    def solve_one(x: np.ndarray) -> tuple[np.ndarray | None, bool]:
        lower[: family.num_eq], upper[: family.num_eq] = x, x
        solver.update(l=lower, u=upper)
        result = solver.solve(raise_error=False)
        solved = result.info.status_val == osqp.SolverStatus.OSQP_SOLVED
        return (result.x.copy() if result.x is not None else None), bool(solved)

    return solve_one


def _clarabel(family: ConstrainedFamily, tolerance: float | None, _: bool) -> InstanceSolve:
    """Clarabel on A y + s = x (zero cone), M y + s = bound (nonnegative cone); b updated."""
    import clarabel

    data = family.arrays()
    inequality, bound, A = _qp_rows(family)
    matrix = sp.vstack([sp.csc_matrix(A), inequality], format="csc")
    b = np.concatenate([np.zeros(family.num_eq), bound])
    cones = [clarabel.ZeroConeT(family.num_eq), clarabel.NonnegativeConeT(len(bound))]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    if tolerance is not None:
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tolerance
    P = sp.triu(sp.csc_matrix(data["Q"]), format="csc")
    solver = clarabel.DefaultSolver(P, data["p"], matrix, b, cones, settings)

    def solve_one(x: np.ndarray) -> tuple[np.ndarray | None, bool]:
        b[: family.num_eq] = x
        solver.update(b=b)
        solution = solver.solve()
        solved = solution.status == clarabel.SolverStatus.Solved
        return np.asarray(solution.x), bool(solved)

    return solve_one


def _cvxpy(family: ConstrainedFamily, tolerance: float | None, warm_start: bool) -> InstanceSolve:
    """The DPP cvxpy problem (x a Parameter) solved by Clarabel, canonicalized once."""
    import cvxpy as cp

    problem, y, parameter = cvxpy_problem(family)
    options = {"warm_start": warm_start}
    if tolerance is not None:
        options |= {"tol_gap_abs": tolerance, "tol_gap_rel": tolerance, "tol_feas": tolerance}

    def solve_one(x: np.ndarray) -> tuple[np.ndarray | None, bool]:
        parameter.value = x
        try:
            problem.solve(solver=cp.CLARABEL, **options)
        except cp.SolverError:
            return None, False
        return y.value, problem.status == cp.OPTIMAL

    return solve_one


def _slsqp(family: ConstrainedFamily, tolerance: float | None, warm_start: bool) -> InstanceSolve:
    """SLSQP from the previous solution moved onto A y = x (else from A^+ x), checked."""
    solve_from = slsqp_problem(family, ftol=tolerance)
    A, A_pinv = family.A.numpy(), family.A_pinv.numpy()
    previous: list[np.ndarray] = []

    def solve_one(x: np.ndarray) -> tuple[np.ndarray | None, bool]:
        anchor = A_pinv @ x
        if warm_start and previous:
            start = previous[-1] + A_pinv @ (x - A @ previous[-1])
            point, solved = solve_from(x, start)
            if not solved:
                point, solved = solve_from(x, anchor)
        else:
            point, solved = solve_from(x, anchor)
        if solved:
            previous[:] = [point]
        return point, solved

    return solve_one
