"""Reference solutions per instance, timed, and checked before anyone may trust them.

Solvers:
- "clarabel" (default for convex families) and "osqp" (QP families only; the default when
  Clarabel is not installed): cvxpy, with the problem written from the family's numpy data,
  independently of the torch functions, and built once with x as a cvxpy Parameter, so each
  instance re-solves without re-canonicalizing.
- "slsqp" (default for nonconvex and nonsmooth families, allowed for convex ones too): scipy's
  SLSQP on the family's torch functions with the autograd objective gradient and the family's
  closed-form inequality Jacobian, started from A^+ x (feasible by
  construction) and, with `num_starts` > 1, from A^+ x moved along random null-space directions
  of A; the best checked candidate wins. A local solver: its optimum is local.
  The nonsmooth term 0.1 ||y|| is smooth on the feasible set, since y = 0 violates A y = x
  unless x = 0.

Check: every returned point goes through the family's torch residuals; an instance is
`accepted` only if the solver reported success and max |h| and max relu(g) are both below
`tolerance`. A rejected instance is kept in the result, flagged, never dropped or hidden.
`solve_times` is the wall time of each instance's solve call(s) in seconds.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import Bounds, minimize
from torch import Tensor

from optiforge.problems.constrained.family import ConstrainedFamily
from optiforge.problems.constrained.linear import LinearInequalityFamily
from optiforge.problems.constrained.quadratic import QuadraticInequalityFamily
from optiforge.problems.constrained.second_order_cone import SecondOrderConeFamily

SOLVERS = ("clarabel", "osqp", "slsqp")
FEASIBILITY_TOLERANCE = 1e-6
OSQP_OPTIONS = {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200_000, "polish": True}
SLSQP_OPTIONS = {"maxiter": 1000, "ftol": 1e-12}
# SLSQP's exit mode "Positive directional derivative for linesearch": at ftol 1e-12 it often
# means no descent is left at float precision (seen on 500-variable SOCP instances)
SLSQP_LINE_SEARCH_STALL = 8
START_SPREAD = 0.5


@dataclass(frozen=True)
class ReferenceSolutions:
    """Per-instance reference results (numpy, first axis = instance).

    solutions [N, n] (NaN rows where the solver returned nothing), objectives [N], max_eq_violation
    and max_ineq_violation [N] (inf where no point), solver_success and feasible [N] bool,
    solve_times [N] seconds.
    """

    solver: str
    tolerance: float
    solutions: np.ndarray
    objectives: np.ndarray
    max_eq_violation: np.ndarray
    max_ineq_violation: np.ndarray
    solver_success: np.ndarray
    feasible: np.ndarray
    solve_times: np.ndarray

    @property
    def accepted(self) -> np.ndarray:
        """[N] bool: the solver succeeded and the point passed the feasibility check."""
        return self.solver_success & self.feasible

    @property
    def flagged(self) -> np.ndarray:
        """Indices of the instances that must not be used as references."""
        return np.flatnonzero(~self.accepted)


@dataclass(frozen=True)
class PointCheck:
    """Independent evaluation of candidate points: objective and max violations [N] each."""

    objectives: np.ndarray
    max_eq_violation: np.ndarray
    max_ineq_violation: np.ndarray

    def feasible(self, tolerance: float) -> np.ndarray:
        """[N] bool: both max violations below `tolerance` (NaN points are never feasible)."""
        return (self.max_eq_violation < tolerance) & (self.max_ineq_violation < tolerance)


def check_points(family: ConstrainedFamily, x: Tensor, solutions: np.ndarray) -> PointCheck:
    """Objective and violations of `solutions` [N, n] through the family's torch functions.

    Rows with NaN (no point returned) get objective NaN and infinite violations.
    """
    count = solutions.shape[0]
    objectives = np.full(count, np.nan)
    max_eq, max_ineq = np.full(count, np.inf), np.full(count, np.inf)
    present = np.isfinite(solutions).all(axis=1)
    if present.any():
        index = torch.from_numpy(np.flatnonzero(present))
        y = torch.from_numpy(solutions[present]).to(x)
        with torch.no_grad():
            violation = family.violation(y, x[index])
            objectives[present] = family.objective(y, x[index]).cpu().numpy()
        max_eq[present] = violation.max_eq.cpu().numpy()
        max_ineq[present] = violation.max_ineq.cpu().numpy()
    return PointCheck(objectives, max_eq, max_ineq)


def default_solver(family: ConstrainedFamily) -> str:
    """Clarabel for convex families (OSQP for QPs without Clarabel), SLSQP otherwise."""
    if not family.is_convex:
        return "slsqp"
    if importlib.util.find_spec("clarabel") is None and isinstance(family, LinearInequalityFamily):
        return "osqp"
    return "clarabel"


def solve_reference(
    family: ConstrainedFamily,
    x: Tensor,
    solver: str | None = None,
    tolerance: float = FEASIBILITY_TOLERANCE,
    num_starts: int = 1,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ReferenceSolutions:
    """Solve every instance x [N, num_eq] with `solver` (None: `default_solver`) and check it.

    `num_starts` and `seed` only matter for SLSQP (extra starts along null-space directions).
    `progress(done, N)` is called after each instance (e.g. to print progress lines).
    """
    solver = default_solver(family) if solver is None else solver
    _check_solver(family, solver)
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive, got {tolerance}")
    if not isinstance(num_starts, int) or num_starts < 1:
        raise ValueError(f"num_starts must be a positive integer, got {num_starts!r}")
    family.check_parameters(x)
    if solver == "slsqp":
        solve_one = _slsqp_instance_solver(family, num_starts, seed, tolerance)
    else:
        solve_one = _cvxpy_instance_solver(family, solver)
    solutions = np.full((x.shape[0], family.num_vars), np.nan)
    success = np.zeros(x.shape[0], dtype=bool)
    solve_times = np.zeros(x.shape[0])
    for instance, parameters in enumerate(x):
        start = time.perf_counter()
        point, success[instance] = solve_one(parameters)
        solve_times[instance] = time.perf_counter() - start
        if point is not None:
            solutions[instance] = point
        if progress is not None:
            progress(instance + 1, x.shape[0])
    check = check_points(family, x, solutions)
    return ReferenceSolutions(
        solver=solver,
        tolerance=tolerance,
        solutions=solutions,
        objectives=check.objectives,
        max_eq_violation=check.max_eq_violation,
        max_ineq_violation=check.max_ineq_violation,
        solver_success=success,
        feasible=check.feasible(tolerance),
        solve_times=solve_times,
    )


InstanceSolver = Callable[[Tensor], tuple[np.ndarray | None, bool]]


def _check_solver(family: ConstrainedFamily, solver: str) -> None:
    """Reject unknown solvers and cvxpy solvers on problems they cannot take."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver != "slsqp" and not family.is_convex:
        raise ValueError(
            f"solver {solver!r} needs a convex family; {family.name!r} is not convex: use 'slsqp'"
        )
    if solver == "osqp" and not isinstance(family, LinearInequalityFamily):
        raise ValueError(f"solver 'osqp' solves QPs only; {family.name!r} is not a QP family")


def _cvxpy_instance_solver(family: ConstrainedFamily, solver: str) -> InstanceSolver:
    """A per-instance solve of the convex family written in cvxpy, with x as a Parameter."""
    import cvxpy as cp

    problem, y, x = cvxpy_problem(family)
    options = OSQP_OPTIONS if solver == "osqp" else {}

    def solve_one(parameters: Tensor) -> tuple[np.ndarray | None, bool]:
        x.value = parameters.cpu().numpy()
        try:
            problem.solve(solver=solver.upper(), **options)
        except cp.SolverError:
            return None, False
        return y.value, problem.status == cp.OPTIMAL

    return solve_one


def cvxpy_problem(family: ConstrainedFamily) -> tuple:
    """(problem, y, x): the convex family in cvxpy with x a Parameter (DPP: canonicalized once)."""
    import cvxpy as cp

    data = family.arrays()
    y = cp.Variable(family.num_vars)
    x = cp.Parameter(family.num_eq)
    objective = 0.5 * cp.quad_form(y, cp.psd_wrap(data["Q"])) + data["p"] @ y
    return cp.Problem(cp.Minimize(objective), cvxpy_feasible_set(family, y, x)), y, x


def cvxpy_feasible_set(family: ConstrainedFamily, y: object, x: object) -> list:
    """The convex family's constraints on the cvxpy Variable y with Parameter x, written from
    its numpy data (independent of the torch residuals)."""
    import cvxpy as cp

    if not family.is_convex:
        raise ValueError(f"{family.name!r} is not convex: it has no cvxpy formulation")
    data = family.arrays()
    constraints = [data["A"] @ y == x]
    if family.box_bound is not None:
        constraints += [y <= family.box_bound, y >= -family.box_bound]
    if isinstance(family, LinearInequalityFamily):
        constraints.append(data["G"] @ y <= data["h"])
    elif isinstance(family, QuadraticInequalityFamily):
        constraints.append(0.5 * data["H_diag"] @ cp.square(y) + data["G"] @ y <= data["h"])
    elif isinstance(family, SecondOrderConeFamily):
        constraints += [
            cp.SOC(data["c"][i] @ y + data["d"][i], data["G"][i] @ y + data["h"][i])
            for i in range(family.num_ineq)
        ]
    else:
        raise ValueError(f"no cvxpy formulation for {type(family).__name__}")
    return constraints


def _slsqp_instance_solver(
    family: ConstrainedFamily, num_starts: int, seed: int, tolerance: float
) -> InstanceSolver:
    """A per-instance SLSQP solve from A^+ x (and null-space perturbations of it)."""
    cpu_family = family.to("cpu")
    null_space = _null_space(cpu_family.A)
    rng = np.random.default_rng(seed)
    minimize_from = _confirmed_on_stall(
        _slsqp_minimizer(cpu_family, SLSQP_OPTIONS),
        _slsqp_minimizer(cpu_family, {"maxiter": SLSQP_OPTIONS["maxiter"]}),
    )

    def solve_one(parameters: Tensor) -> tuple[np.ndarray | None, bool]:
        x = parameters.cpu().unsqueeze(0)
        anchor = cpu_family.constructed_point(x)[0].numpy()
        steps = rng.normal(0.0, START_SPREAD, size=(num_starts - 1, null_space.shape[1]))
        starts = np.vstack([anchor, anchor + steps @ null_space.T])
        results = [minimize_from(x, start) for start in starts]
        successes = np.array([result.success for result in results], dtype=bool)
        candidates = np.vstack([result.x for result in results])
        check = check_points(cpu_family, x.expand(len(starts), -1), candidates)
        usable = check.feasible(tolerance) & successes
        if usable.any():
            best = int(np.flatnonzero(usable)[np.argmin(check.objectives[usable])])
        else:
            best = int(np.argmin(np.maximum(check.max_eq_violation, check.max_ineq_violation)))
        return candidates[best], bool(successes[best])

    return solve_one


def _confirmed_on_stall(tight: Callable, confirm: Callable) -> Callable:
    """`tight`, except that a line-search stall is re-solved by `confirm` (scipy's default ftol)
    from the stalled point: the reference keeps it only if that solve reports success."""

    def minimize_from(x: Tensor, start: np.ndarray) -> object:
        result = tight(x, start)
        if result.success or result.status != SLSQP_LINE_SEARCH_STALL:
            return result
        return confirm(x, result.x)

    return minimize_from


def slsqp_problem(
    family: ConstrainedFamily, ftol: float | None = None
) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, bool]]:
    """solve_from(x, start) -> (point, ok): one SLSQP solve of instance x [num_eq] from `start`;
    ok = SLSQP reported success and the point passed the check at `FEASIBILITY_TOLERANCE`.
    `ftol` None: scipy's default (1e-6)."""
    cpu_family = family.to("cpu")
    options = {"maxiter": SLSQP_OPTIONS["maxiter"]} | ({} if ftol is None else {"ftol": ftol})
    minimize_from = _slsqp_minimizer(cpu_family, options)

    def solve_from(x: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, bool]:
        parameters = torch.from_numpy(np.asarray(x, dtype=np.float64)).unsqueeze(0)
        result = minimize_from(parameters, start)
        check = check_points(cpu_family, parameters, result.x[None])
        return result.x, bool(result.success and check.feasible(FEASIBILITY_TOLERANCE)[0])

    return solve_from


def _slsqp_minimizer(family: ConstrainedFamily, options: dict) -> Callable:
    """minimize_from(x [1, num_eq], start) -> scipy OptimizeResult of SLSQP with the autograd
    objective gradient and the family's closed-form inequality Jacobian (CPU family)."""
    A = family.A.numpy()
    bounds = None if family.box_bound is None else Bounds(-family.box_bound, family.box_bound)

    def minimize_from(x: Tensor, start: np.ndarray) -> object:
        inequality = family.problem_ineq_residual
        constraints = [
            {"type": "eq", "fun": _residual(family.eq_residual, x), "jac": lambda _: A},
            {
                "type": "ineq",  # scipy's convention is fun(y) >= 0
                "fun": _residual(inequality, x, sign=-1.0),
                "jac": _residual(family.problem_ineq_jacobian, x, sign=-1.0),
            },
        ]
        objective = _value_and_gradient(family.objective, x)
        return minimize(
            objective,
            start,
            jac=True,
            method="SLSQP",
            bounds=bounds,
            constraints=constraints,
            options=options,
        )

    return minimize_from


def _null_space(A: Tensor) -> np.ndarray:
    """Orthonormal basis [n, n - m] of the null space of A (full row rank by construction)."""
    _, _, vh = np.linalg.svd(A.numpy())
    return vh[A.shape[0] :].T


TorchResidual = Callable[[Tensor, Tensor], Tensor]


def _value_and_gradient(
    function: TorchResidual, x: Tensor
) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """numpy (f(y), grad f(y)) for one instance of a batched scalar torch function."""

    def evaluate(y: np.ndarray) -> tuple[float, np.ndarray]:
        point = torch.tensor(y, dtype=x.dtype).unsqueeze(0).requires_grad_(True)
        value = function(point, x)
        (gradient,) = torch.autograd.grad(value.sum(), point)
        return float(value.detach()), gradient[0].numpy()

    return evaluate


def _residual(
    function: TorchResidual, x: Tensor, sign: float = 1.0
) -> Callable[[np.ndarray], np.ndarray]:
    """numpy sign * r(y) for one instance of a batched torch function (residuals or their
    closed-form Jacobian)."""

    def evaluate(y: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return sign * function(torch.tensor(y, dtype=x.dtype).unsqueeze(0), x)[0].numpy()

    return evaluate
