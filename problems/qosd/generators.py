"""Seeded synthetic QoSD instances on Erdos-Renyi and Barabasi-Albert graphs.

Graphs: directed G(n, p) (every ordered pair independently with probability p), or an
undirected Barabasi-Albert graph with m edges per new node, each edge used in both directions
(the setting of the linear-QoSD GNN baseline: n = 100, p = 0.05 or m = 3, 5 pairs).
Edge parameters: unperturbed weight w_e ~ U[weight_low, weight_high], split as alpha = (1 -
slope_share) w and beta = slope_share w; caps u_e ~ U{cap_low..cap_high} (integers, as in
Gnutella08). Pairs: distinct random (s, t) with t reachable and unperturbed distance below T
(otherwise the pair needs nothing), rejecting pairs that cannot reach T within the caps.
T = threshold_factor x the median unperturbed distance of candidate pairs, so instances of
different sizes are comparably hard.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from optiforge.problems.qosd.edge_functions import check_edge_function, shape
from optiforge.problems.qosd.instance import QoSDInstance

GRAPH_MODELS = ("erdos_renyi", "barabasi_albert")


@dataclass(frozen=True)
class SyntheticQoSDConfig:
    """Everything that defines a synthetic instance distribution (sizes, weights, caps, T)."""

    graph_model: str = "erdos_renyi"
    num_nodes: int = 100
    edge_probability: float = 0.05
    attachment: int = 3
    num_pairs: int = 5
    edge_function: str = "linear"
    weight_low: float = 1.0
    weight_high: float = 2.0
    slope_share: float = 0.5
    cap_low: int = 2
    cap_high: int = 5
    threshold_factor: float = 1.5

    def __post_init__(self) -> None:
        if self.graph_model not in GRAPH_MODELS:
            raise ValueError(f"graph_model must be one of {GRAPH_MODELS}, got {self.graph_model!r}")
        check_edge_function(self.edge_function)
        if not (isinstance(self.num_nodes, int) and self.num_nodes >= 3):
            raise ValueError(f"num_nodes must be an integer >= 3, got {self.num_nodes!r}")
        if not 0 < self.edge_probability <= 1:
            raise ValueError(f"edge_probability must lie in (0, 1], got {self.edge_probability}")
        if not (isinstance(self.attachment, int) and 1 <= self.attachment < self.num_nodes):
            raise ValueError(
                f"attachment must be an integer in [1, num_nodes), got {self.attachment!r}"
            )
        if not (isinstance(self.num_pairs, int) and self.num_pairs >= 1):
            raise ValueError(f"num_pairs must be a positive integer, got {self.num_pairs!r}")
        if not 0 < self.weight_low <= self.weight_high:
            raise ValueError("weights need 0 < weight_low <= weight_high")
        if not 0 < self.slope_share <= 1:
            raise ValueError(f"slope_share must lie in (0, 1], got {self.slope_share}")
        if not 0 <= self.cap_low <= self.cap_high:
            raise ValueError("caps need 0 <= cap_low <= cap_high")
        if not self.threshold_factor > 1:
            raise ValueError(f"threshold_factor must be > 1, got {self.threshold_factor}")


def random_graph(config: SyntheticQoSDConfig, rng: np.random.Generator) -> np.ndarray:
    """edge_index [2, E] of a directed graph drawn from the config's model."""
    seed = int(rng.integers(2**31))
    if config.graph_model == "erdos_renyi":
        graph = nx.gnp_random_graph(
            config.num_nodes, config.edge_probability, seed=seed, directed=True
        )
    else:
        graph = nx.barabasi_albert_graph(config.num_nodes, config.attachment, seed=seed)
        graph = graph.to_directed()
    edges = np.array(sorted(graph.edges()), dtype=np.int64).reshape(-1, 2)
    return edges.T


def generate_instance(config: SyntheticQoSDConfig, seed: int) -> QoSDInstance:
    """One instance from `config`, reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        edge_index = random_graph(config, rng)
        if edge_index.shape[1] == 0:
            continue
        weight = rng.uniform(config.weight_low, config.weight_high, edge_index.shape[1])
        cap = rng.integers(config.cap_low, config.cap_high + 1, edge_index.shape[1]).astype(float)
        pairs = _pick_pairs(config, edge_index, weight, cap, rng)
        if pairs is None:
            continue
        pairs, threshold = pairs
        return QoSDInstance(
            num_nodes=config.num_nodes,
            edge_index=edge_index,
            alpha=(1 - config.slope_share) * weight,
            beta=config.slope_share * weight,
            cap=cap,
            pairs=pairs,
            threshold=threshold,
            edge_function=config.edge_function,
            name=f"{config.graph_model}_n{config.num_nodes}_{config.edge_function}_s{seed}",
        )
    raise RuntimeError(f"no instance with {config.num_pairs} usable pairs in 100 graph draws")


def _pick_pairs(
    config: SyntheticQoSDConfig,
    edge_index: np.ndarray,
    weight: np.ndarray,
    cap: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float] | None:
    """num_pairs distinct pairs below T and able to reach it at the caps, and T; or None."""
    size = (config.num_nodes, config.num_nodes)
    base = dijkstra(csr_matrix((weight, tuple(edge_index)), shape=size))
    finite = np.isfinite(base) & (base > 0)
    if finite.sum() < config.num_pairs:
        return None
    threshold = config.threshold_factor * float(np.median(base[finite]))
    lift = config.slope_share * weight * (shape(config.edge_function, cap) - 1.0)
    at_caps = dijkstra(csr_matrix((weight + lift, tuple(edge_index)), shape=size))
    usable = np.argwhere(finite & (base < threshold) & (at_caps >= threshold))
    if len(usable) < config.num_pairs:
        return None
    chosen = usable[rng.choice(len(usable), config.num_pairs, replace=False)]
    return chosen.astype(np.int64), threshold
