"""Communication graphs of the nodes and their Metropolis-Hastings mixing matrices.

A topology is an undirected connected graph on `nodes` vertices; its mixing matrix W is symmetric
and doubly stochastic with W_ij > 0 exactly on the edges and the diagonal (Metropolis-Hastings:
W_ij = 1 / (1 + max(deg_i, deg_j))). Every process builds the same graph from the same arguments,
so the ranks agree on W without exchanging it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

TopologyName = Literal["ring", "torus", "erdos_renyi"]
TOPOLOGIES: tuple[str, ...] = ("ring", "torus", "erdos_renyi")


@dataclass(frozen=True)
class Topology:
    """A graph on `nodes` vertices, its mixing matrix `weights` [nodes, nodes] (float64) and the
    second largest absolute eigenvalue `lambda2` of W (the gossip contraction factor)."""

    name: str
    nodes: int
    adjacency: Tensor
    weights: Tensor
    lambda2: float

    def neighbours(self, node: int) -> list[int]:
        """The nodes that `node` exchanges with (its graph neighbours, itself excluded)."""
        return [int(j) for j in torch.nonzero(self.adjacency[node]).flatten()]


def ring_adjacency(nodes: int) -> Tensor:
    """Cycle 0-1-...-(nodes-1)-0 (a single edge for 2 nodes)."""
    adjacency = torch.zeros(nodes, nodes, dtype=torch.bool)
    index = torch.arange(nodes)
    adjacency[index, (index + 1) % nodes] = True
    adjacency[(index + 1) % nodes, index] = True
    adjacency.fill_diagonal_(False)
    return adjacency


def torus_shape(nodes: int) -> tuple[int, int]:
    """The most square factorisation rows x columns = nodes with rows <= columns."""
    rows = max(r for r in range(1, int(nodes**0.5) + 1) if nodes % r == 0)
    return rows, nodes // rows


def torus_adjacency(nodes: int) -> Tensor:
    """2-D torus on `torus_shape(nodes)`: each node links to its wrap-around row and column
    neighbours (coinciding neighbours collapse, so a 2 x c torus has degree 3)."""
    rows, columns = torus_shape(nodes)
    grid = torch.arange(nodes).reshape(rows, columns)
    adjacency = torch.zeros(nodes, nodes, dtype=torch.bool)
    for shift, dim in ((1, 0), (-1, 0), (1, 1), (-1, 1)):
        adjacency[grid.flatten(), torch.roll(grid, shift, dim).flatten()] = True
    adjacency.fill_diagonal_(False)
    return adjacency


def connected(adjacency: Tensor) -> bool:
    """Whether the undirected graph is connected (breadth-first reachability from node 0)."""
    reached = torch.zeros(adjacency.shape[0], dtype=torch.bool)
    reached[0] = True
    while True:
        grown = reached | adjacency[reached].any(dim=0)
        if torch.equal(grown, reached):
            return bool(reached.all())
        reached = grown


def erdos_renyi_adjacency(nodes: int, edge_probability: float, seed: int) -> Tensor:
    """G(nodes, edge_probability), redrawn (same seed stream) until connected; 200 tries."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(200):
        upper = torch.rand(nodes, nodes, generator=generator) < edge_probability
        adjacency = torch.triu(upper, diagonal=1)
        adjacency = adjacency | adjacency.T
        if connected(adjacency):
            return adjacency
    raise ValueError(
        f"edge_probability: {edge_probability} gave no connected graph on {nodes} nodes in 200 "
        "draws; use a larger value in (0, 1]"
    )


def metropolis_hastings(adjacency: Tensor) -> Tensor:
    """Symmetric doubly stochastic W: 1 / (1 + max degree) on edges, the rest on the diagonal."""
    degree = adjacency.sum(dim=1).to(torch.float64)
    pair = 1.0 / (1.0 + torch.maximum(degree[:, None], degree[None, :]))
    weights = torch.where(adjacency, pair, torch.zeros_like(pair))
    return weights + torch.diag(1.0 - weights.sum(dim=1))


def make_topology(name: str, nodes: int, edge_probability: float = 0.5, seed: int = 0) -> Topology:
    """The named topology on `nodes` nodes with its Metropolis-Hastings mixing matrix."""
    if not isinstance(nodes, int) or nodes < 1:
        raise ValueError(f"nodes: must be an integer >= 1, got {nodes!r}")
    if name not in TOPOLOGIES:
        raise ValueError(f"topology: unknown {name!r}; allowed: {', '.join(TOPOLOGIES)}")
    if not 0.0 < edge_probability <= 1.0:
        raise ValueError(f"edge_probability: must be in (0, 1], got {edge_probability}")
    if name == "ring":
        adjacency = ring_adjacency(nodes)
    elif name == "torus":
        adjacency = torus_adjacency(nodes)
    else:
        adjacency = erdos_renyi_adjacency(nodes, edge_probability, seed)
    weights = metropolis_hastings(adjacency)
    eigenvalues = torch.linalg.eigvalsh(weights).abs().sort(descending=True).values
    lambda2 = float(eigenvalues[1]) if nodes > 1 else 0.0
    return Topology(name, nodes, adjacency, weights, lambda2)
