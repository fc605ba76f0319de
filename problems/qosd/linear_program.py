"""Exact optimum of linear QoSD by LP with shortest-path constraint generation (scipy HiGHS).

With f_e(x) = w_e + beta_e x ("linear"), pair i is satisfied iff every s_i-t_i path P has
sum_{e in P} (w_e + beta_e x_e) >= T, so QoSD is the LP

    min sum_e x_e  s.t.  sum_{e in P} beta_e x_e >= T - sum_{e in P} w_e  for every such P,
                         0 <= x_e <= cap_e,

with exponentially many rows. Constraint generation solves it over a growing path set: solve,
find each pair's shortest path at the LP point, add those still shorter than T, repeat. When no
path is violated the LP point is feasible for the full LP, and it is optimal for a relaxation of
it, hence the exact optimum (up to HiGHS's tolerances; the returned point is then checked).
The objective is a lower bound on every feasible QoSD solution of the instance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from optiforge.problems.qosd.checker import AIM_MARGIN, DISTANCE_TOLERANCE, check_solution
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.path_stressing import shortest_path_edges

MAX_GENERATION_ROUNDS = 10_000


@dataclass(frozen=True)
class LinearProgramResult:
    """The optimal x [E], its budget, and how many rounds / path rows it took."""

    x: np.ndarray
    budget: float
    rounds: int
    num_paths: int


def solve_linear_program(instance: QoSDInstance) -> LinearProgramResult:
    """The optimum of a linear instance by constraint generation (see module docstring)."""
    if instance.edge_function != "linear":
        raise ValueError(
            "solve_linear_program needs edge_function 'linear' (f affine in x), "
            f"got {instance.edge_function!r}"
        )
    unperturbed = instance.alpha + instance.beta
    target = instance.threshold * (1 + AIM_MARGIN)
    sources, rows = instance.pairs[:, 0], np.arange(len(instance.pairs))
    paths: list[np.ndarray] = []
    x = np.zeros(instance.num_edges)
    for round_ in range(1, MAX_GENERATION_ROUNDS + 1):
        distances, predecessors = dijkstra(
            instance.adjacency(x), indices=sources, return_predecessors=True
        )
        short = distances[rows, instance.pairs[:, 1]] < instance.threshold * (
            1 - DISTANCE_TOLERANCE
        )
        if not short.any():
            x = np.clip(x, 0.0, instance.cap)
            if not check_solution(instance, x).feasible:
                raise RuntimeError("LP point failed the independent check")
            return LinearProgramResult(x, float(x.sum()), round_ - 1, len(paths))
        paths += [shortest_path_edges(instance, predecessors[p], p) for p in np.flatnonzero(short)]
        x = _solve_restricted(instance, paths, unperturbed, target)
    raise RuntimeError("solve_linear_program: constraint generation did not converge")


def _solve_restricted(
    instance: QoSDInstance, paths: list[np.ndarray], unperturbed: np.ndarray, target: float
) -> np.ndarray:
    """LP over the generated path rows, written as -sum beta x <= -(T - sum w)."""
    row = np.repeat(np.arange(len(paths)), [len(p) for p in paths])
    column = np.concatenate(paths)
    matrix = csr_matrix(
        (-instance.beta[column], (row, column)), shape=(len(paths), instance.num_edges)
    )
    bound = np.array([-(target - unperturbed[p].sum()) for p in paths])
    result = linprog(
        np.ones(instance.num_edges),
        A_ub=matrix,
        b_ub=bound,
        bounds=np.stack([np.zeros(instance.num_edges), instance.cap], axis=1),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed on the restricted LP: {result.message}")
    return result.x
