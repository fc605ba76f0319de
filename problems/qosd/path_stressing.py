"""Iterative path-stressing (the classical QoSD heuristic), its random variant, and pruning.

`stress_paths` repeats, until every pair reaches T: take the current shortest path of every
violated pair and lift one edge with headroom. "greedy": each candidate edge e is lifted by the
largest deficit among the violated paths through it (or up to its cap); its gain is the total
deficit that lift removes over all those paths, and the edge with the most gain per unit of
budget wins (marginal gain per cost, the classical rule, aware of edges shared by several
pairs). "random" (the random-feasible baseline): a uniformly random edge with headroom on the
most violated pair's path, lifted by that pair's deficit or up to its cap. Each round either
satisfies a path for good (weights only grow) or saturates an edge, so it terminates; a round
limit guards against pathological inputs. It can start from any x in the box (Forge's repair).

`prune` first zeroes, by group testing, every set of perturbed edges that can go to 0
together (edges that cannot go to 0 even alone are found for all edges at once from two
multi-source Dijkstras and left out of the tests: zeroing others only shortens paths, so they
stay necessary), then lowers edges one at a time (largest perturbation first) to the least
value that keeps every pair at T: for edge e = (u, v), max_i (T - d(s_i, u) - d(v, t_i)) with
distances at the current x (a shortest s->u or v->t path never uses e itself, weights being
positive), and every path avoiding e is unaffected. The result is feasible and
coordinate-wise minimal: no single edge can be lowered without breaking a pair.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import dijkstra

from optiforge.problems.qosd.checker import (
    AIM_MARGIN,
    DISTANCE_TOLERANCE,
    check_solution,
    pair_distances,
)
from optiforge.problems.qosd.edge_functions import perturbation_for_weight
from optiforge.problems.qosd.instance import QoSDInstance

EDGE_RULES = ("greedy", "random")
MAX_ROUNDS_PER_EDGE = 50


def shortest_path_edges(instance: QoSDInstance, predecessors: np.ndarray, pair: int) -> np.ndarray:
    """Edge ids on the shortest path of `pair` from a dijkstra predecessor row."""
    source, node = instance.pairs[pair]
    heads = []
    while node != source:
        heads.append(node)
        node = predecessors[node]
        if node < 0:
            raise ValueError(f"pair {pair}: target unreachable")
    heads = np.array(heads[::-1], dtype=np.int64)
    tails = np.concatenate([[source], heads[:-1]])
    return instance.edge_ids(tails, heads)


def stress_paths(
    instance: QoSDInstance,
    start: np.ndarray | None = None,
    rule: str = "greedy",
    seed: int = 0,
    lift_quantum: float = 1.0,
    priority: np.ndarray | None = None,
) -> np.ndarray:
    """A feasible perturbation built by path-stressing from `start` (default: zeros).

    `lift_quantum` (fraction of T, in (0, 1]) caps a greedy lift: small quanta let the greedy
    spread weight over edges, which pays on convex (quadratic) edge functions. `priority` [E]
    (> 0) multiplies the greedy score gain / cost of each edge: a learned preference (Forge).
    """
    if rule not in EDGE_RULES:
        raise ValueError(f"rule must be one of {EDGE_RULES}, got {rule!r}")
    if not 0 < lift_quantum <= 1:
        raise ValueError(f"lift_quantum must lie in (0, 1], got {lift_quantum}")
    if priority is not None and (
        np.shape(priority) != (instance.num_edges,) or not np.all(np.asarray(priority) > 0)
    ):
        raise ValueError(f"priority must have shape [{instance.num_edges}] with values > 0")
    x = np.zeros(instance.num_edges) if start is None else np.array(start, dtype=np.float64)
    if x.shape != (instance.num_edges,) or np.any(x < 0) or np.any(x > instance.cap):
        raise ValueError(f"start must have shape [{instance.num_edges}] and lie in [0, cap]")
    rng = np.random.default_rng(seed)
    target = instance.threshold * (1 + AIM_MARGIN)
    sources = instance.pairs[:, 0]
    rows = np.arange(len(sources))
    for _ in range(MAX_ROUNDS_PER_EDGE * instance.num_edges + len(sources)):
        distances, predecessors = dijkstra(
            instance.adjacency(x), indices=sources, return_predecessors=True
        )
        deficit = target - distances[rows, instance.pairs[:, 1]]
        violated = np.flatnonzero(deficit > instance.threshold * DISTANCE_TOLERANCE)
        if violated.size == 0:
            return x
        if rule == "random":
            violated = violated[np.argmax(deficit[violated])][None]
        paths = [shortest_path_edges(instance, predecessors[p], p) for p in violated]
        path_deficit = np.repeat(deficit[violated], [len(path) for path in paths])
        on_path = np.concatenate(paths)
        headroom = instance.weights(instance.cap[on_path], on_path) - instance.weights(
            x[on_path], on_path
        )
        keep = headroom > 0
        if not keep.any():
            raise RuntimeError("a violated pair's shortest path has every edge at its cap")
        edge, slot = np.unique(on_path[keep], return_inverse=True)
        wanted = np.zeros(edge.size)
        np.maximum.at(wanted, slot, path_deficit[keep])
        if rule == "greedy":
            wanted = np.minimum(wanted, lift_quantum * instance.threshold)
        weight = instance.weights(x[edge], edge)
        lift = np.minimum(wanted, instance.weights(instance.cap[edge], edge) - weight)
        new_x = np.where(
            lift < wanted,
            instance.cap[edge],
            np.clip(
                perturbation_for_weight(
                    instance.edge_function,
                    instance.alpha[edge],
                    instance.beta[edge],
                    weight + lift,
                ),
                x[edge],
                instance.cap[edge],
            ),
        )
        if rule == "greedy":
            gain = np.zeros(edge.size)
            np.add.at(gain, slot, np.minimum(lift[slot], path_deficit[keep]))
            spent = np.maximum(new_x - x[edge], np.finfo(float).tiny)
            score = gain / spent if priority is None else gain / spent * priority[edge]
            choice = int(np.argmax(score))
        else:
            choice = int(rng.integers(edge.size))
        x[edge[choice]] = new_x[choice]
    raise RuntimeError("stress_paths: round limit reached without satisfying every pair")


def prune(instance: QoSDInstance, x: np.ndarray) -> np.ndarray:
    """Zero loose edges in groups, then lower each perturbed edge (largest first) to the
    least value that keeps feasibility."""
    x = np.array(x, dtype=np.float64)
    if not check_solution(instance, x).feasible:
        raise ValueError("prune needs a feasible x (in the box, every pair at T)")
    perturbed = np.flatnonzero(x > 0)
    zero_weight = instance.weights(np.zeros(perturbed.size), perturbed)
    alone = _needed_weights(instance, x, perturbed, instance.threshold) <= zero_weight
    _zero_in_groups(instance, x, perturbed[alone])
    target = instance.threshold * (1 + AIM_MARGIN)
    for edge in np.argsort(-x, kind="stable"):
        if x[edge] <= 0:
            break
        needed_weight = _needed_weights(instance, x, np.array([edge]), target)
        lowest = perturbation_for_weight(
            instance.edge_function,
            instance.alpha[edge : edge + 1],
            instance.beta[edge : edge + 1],
            needed_weight,
        )[0]
        x[edge] = min(x[edge], lowest)
    return x


def _needed_weights(
    instance: QoSDInstance, x: np.ndarray, edges: np.ndarray, target: float
) -> np.ndarray:
    """Least weight of each edge (u, v) in `edges` keeping every pair at `target`, the other
    edges held at x: max_i (target - d(s_i, u) - d(v, t_i)), from two multi-source Dijkstras."""
    tails, heads = instance.edge_index[:, edges]
    from_sources = dijkstra(instance.adjacency(x), indices=instance.pairs[:, 0])[:, tails]
    reverse = instance.adjacency(x, reverse=True)
    to_targets = dijkstra(reverse, indices=instance.pairs[:, 1])[:, heads]
    return np.max(target - from_sources - to_targets, axis=0)


def _zero_in_groups(instance: QoSDInstance, x: np.ndarray, group: np.ndarray) -> None:
    """Set x to 0 on as much of `group` as stays feasible, by halving (group testing): one
    Dijkstra per test, so the many edges a rough start over-perturbs go in a few tests."""
    if group.size == 0:
        return
    trial = x.copy()
    trial[group] = 0.0
    if np.all(pair_distances(instance, trial) >= instance.threshold):
        x[group] = 0.0
        return
    if group.size == 1:
        return
    half = group.size // 2
    _zero_in_groups(instance, x, group[:half])
    _zero_in_groups(instance, x, group[half:])
