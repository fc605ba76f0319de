"""Node and edge features of a QoSD instance for graph learning (numpy, scale-free in T).

Node (5): is a source, is a target, min over pairs of d(s_i, node) / T and d(node, t_i) / T
(unperturbed, capped at 4; 4 = unreachable), log(1 + out-degree).
Edge (9): unperturbed weight / T, beta / T, headroom (f(cap) - f(0)) / T, log(1 + cap), one-hot
edge function (3), tightness min_i (d(s_i, u) + f_e(0) + d(v, t_i)) / T (< 1 only on edges of a
path shorter than T, capped at 4), and the number of pairs whose shortest path uses the edge
with slack (0 if none).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import dijkstra

from optiforge.problems.qosd.edge_functions import EDGE_FUNCTIONS
from optiforge.problems.qosd.instance import QoSDInstance

NODE_FEATURES, EDGE_FEATURES = 5, 9
DISTANCE_CAP = 4.0


def qosd_features(instance: QoSDInstance) -> tuple[np.ndarray, np.ndarray]:
    """(node features [N, 5], edge features [E, 9]) as float32."""
    zero = np.zeros(instance.num_edges)
    adjacency = instance.adjacency(zero)
    threshold = instance.threshold
    sources, targets = instance.pairs[:, 0], instance.pairs[:, 1]
    from_sources = np.minimum(dijkstra(adjacency, indices=sources) / threshold, DISTANCE_CAP)
    to_targets = np.minimum(
        dijkstra(instance.adjacency(zero, reverse=True), indices=targets) / threshold, DISTANCE_CAP
    )
    tails, heads = instance.edge_index
    node = np.zeros((instance.num_nodes, NODE_FEATURES))
    node[sources, 0] = 1.0
    node[targets, 1] = 1.0
    node[:, 2] = from_sources.min(axis=0)
    node[:, 3] = to_targets.min(axis=0)
    node[:, 4] = np.log1p(np.bincount(tails, minlength=instance.num_nodes))
    weight = instance.weights(zero) / threshold
    through = from_sources[:, tails] + weight[None, :] + to_targets[:, heads]  # [k, E]
    on_short_path = (through < 1.0) & np.isclose(
        through, (from_sources[np.arange(len(targets)), targets])[:, None]
    )
    edge = np.zeros((instance.num_edges, EDGE_FEATURES))
    edge[:, 0] = weight
    edge[:, 1] = instance.beta / threshold
    edge[:, 2] = instance.weights(instance.cap) / threshold - weight
    edge[:, 3] = np.log1p(instance.cap)
    edge[:, 4 + EDGE_FUNCTIONS.index(instance.edge_function)] = 1.0
    edge[:, 7] = np.minimum(through.min(axis=0), DISTANCE_CAP)
    edge[:, 8] = on_short_path.sum(axis=0)
    return node.astype(np.float32), edge.astype(np.float32)
