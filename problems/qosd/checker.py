"""Exact, independent feasibility check of a QoSD solution: Dijkstra per pair (scipy).

Used for every solution the project reports. A solution x [E] is feasible when it is finite,
inside the box 0 <= x <= cap (exactly; no tolerance), and every critical pair's shortest-path
distance under f_e(x_e) is at least T (1 - `DISTANCE_TOLERANCE`): the relative slack only
absorbs float rounding of path sums; solvers aim at T (1 + `AIM_MARGIN`) so they clear it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from optiforge.problems.qosd.edge_functions import edge_weights
from optiforge.problems.qosd.instance import QoSDInstance

DISTANCE_TOLERANCE = 1e-9
AIM_MARGIN = 1e-10


@dataclass(frozen=True)
class SolutionCheck:
    """Outcome of `check_solution`: budget sum(x), per-pair distances [k], and the verdicts."""

    budget: float
    distances: np.ndarray
    in_box: bool
    pairs_satisfied: np.ndarray

    @property
    def feasible(self) -> bool:
        return self.in_box and bool(self.pairs_satisfied.all())


def pair_distances(instance: QoSDInstance, x: np.ndarray, independent: bool = False) -> np.ndarray:
    """Shortest-path distance of every critical pair at perturbation x. The solvers' fast
    path uses the instance's cached CSR structure; `independent` builds the graph afresh
    from the edge list (what `check_solution` uses, so a bug in the cache cannot hide)."""
    sources, targets = instance.pairs[:, 0], instance.pairs[:, 1]
    unique_sources, row = np.unique(sources, return_inverse=True)
    if independent:
        tails, heads = instance.edge_index
        weights = edge_weights(instance.edge_function, instance.alpha, instance.beta, x)
        size = (instance.num_nodes, instance.num_nodes)
        graph = coo_matrix((weights, (tails, heads)), shape=size).tocsr()
    else:
        graph = instance.adjacency(x)
    return dijkstra(graph, indices=unique_sources)[row, targets]


def check_solution(instance: QoSDInstance, x: np.ndarray) -> SolutionCheck:
    """Check x [E] against the box and every pair's threshold; never raises on a bad x."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (instance.num_edges,) or not np.all(np.isfinite(x)):
        nan = np.full(len(instance.pairs), np.nan)
        return SolutionCheck(float("nan"), nan, False, np.zeros(len(instance.pairs), bool))
    in_box = bool(np.all(x >= 0) and np.all(x <= instance.cap))
    distances = pair_distances(instance, np.clip(x, 0.0, instance.cap), independent=True)
    satisfied = distances >= instance.threshold * (1 - DISTANCE_TOLERANCE)
    return SolutionCheck(float(x.sum()), distances, in_box, satisfied)
