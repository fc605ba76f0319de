"""Differentiable reward of a QoSD perturbation: -(budget + penalty x smooth violation) / T.

Shortest-path distance is piecewise linear in the edge weights, with the edges of the
current shortest path as its gradient. `PathPool` keeps, per critical pair, every shortest
path met so far (found by Dijkstra at the points being scored), so the violation can be
smoothed over all of them: d_i ~ softmin_tau over the pool's path lengths (lengths in units
of T), violation_i = softplus((1 - d_i) / tau) * tau, which -> relu(1 - d_i) as tau -> 0.
The reward is then a smooth, differentiable function of x; it never decides feasibility
(the exact checker does), it only guides the search.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from scipy.sparse.csgraph import dijkstra
from torch import Tensor

from optiforge.problems.qosd.edge_functions import edge_weights
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.path_stressing import shortest_path_edges


class PathPool:
    """Per-pair sets of shortest paths (edge-id arrays) met so far on one instance."""

    def __init__(self, instance: QoSDInstance) -> None:
        self.instance = instance
        self.paths: list[list[np.ndarray]] = [[] for _ in instance.pairs]
        self.keys: list[set[bytes]] = [set() for _ in instance.pairs]

    def add_shortest_paths(self, x: np.ndarray) -> None:
        """Add every pair's current shortest path at perturbation x (numpy, in the box)."""
        instance = self.instance
        _, predecessors = dijkstra(
            instance.adjacency(np.clip(x, 0.0, instance.cap)),
            indices=instance.pairs[:, 0],
            return_predecessors=True,
        )
        for pair in range(len(instance.pairs)):
            path = shortest_path_edges(instance, predecessors[pair], pair)
            if path.tobytes() not in self.keys[pair]:
                self.keys[pair].add(path.tobytes())
                self.paths[pair].append(path)

    def incidence(self) -> tuple[Tensor, Tensor, Tensor]:
        """(path index, edge index) of every pool entry and each path's pair: [M], [M], [P]."""
        paths = [path for pair_paths in self.paths for path in pair_paths]
        pair_of_path = [pair for pair, pair_paths in enumerate(self.paths) for _ in pair_paths]
        path_index = np.repeat(np.arange(len(paths)), [len(path) for path in paths])
        return (
            torch.from_numpy(path_index),
            torch.from_numpy(np.concatenate(paths)),
            torch.tensor(pair_of_path),
        )


def smooth_reward(
    pool: PathPool, x: Tensor, penalty: float = 10.0, temperature: float = 0.02
) -> Tensor:
    """Reward of perturbations x [S, E] (differentiable) on the pool's instance -> [S]."""
    instance = pool.instance
    alpha = torch.from_numpy(instance.alpha).to(x)
    beta = torch.from_numpy(instance.beta).to(x)
    weights = edge_weights(instance.edge_function, alpha, beta, x) / instance.threshold
    path_index, edge_index, pair_of_path = (index.to(x.device) for index in pool.incidence())
    num_paths = len(pair_of_path)
    lengths = torch.zeros(x.shape[0], num_paths, dtype=x.dtype, device=x.device).index_add_(
        1, path_index, weights[:, edge_index]
    )
    # softmin per pair over its paths: -tau * logsumexp(-length / tau)
    scaled = -lengths / temperature
    pair_max = torch.full((x.shape[0], len(pool.paths)), -torch.inf, dtype=x.dtype, device=x.device)
    pair_max = pair_max.scatter_reduce(1, pair_of_path.expand_as(scaled), scaled, "amax")
    shifted = torch.exp(scaled - pair_max[:, pair_of_path])
    sums = torch.zeros_like(pair_max).index_add_(1, pair_of_path, shifted)
    soft_distance = -temperature * (pair_max + torch.log(sums))
    violation = temperature * F.softplus((1.0 - soft_distance) / temperature)
    budget = x.sum(dim=1) / instance.threshold
    return -(budget + penalty * violation.sum(dim=1))
