"""A QoSD instance: directed graph, edge-weight functions, caps, critical pairs, threshold T.

QoSD: choose 0 <= x_e <= u_e minimising sum_e x_e such that, with edge weights f_e(x_e), every
critical pair (s_i, t_i) has shortest-path distance at least T.

`QoSDInstance` validates on construction and rejects, naming the field: non-integer or
out-of-range node ids, self-loops, parallel edges (a shortest path would silently take the
cheaper copy), negative or non-finite caps, alpha < 0 or beta <= 0 (weights must be positive for
Dijkstra), pairs with s = t or t unreachable from s, and pairs whose T cannot be reached even
with every edge at its cap. Pairs already at distance >= T unperturbed are allowed (they need
nothing). `to_data` gives the torch-geometric `Data` view used by the learned phases.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra
from torch_geometric.data import Data

from optiforge.problems.qosd.edge_functions import EDGE_FUNCTIONS, check_edge_function, edge_weights


@dataclass(frozen=True, eq=False)
class QoSDInstance:
    """One instance (numpy, float64). edge_index [2, E] int64 (row 0 = tail u, row 1 = head v);
    alpha, beta, cap [E]; pairs [k, 2] int64 (source, target); threshold T > 0."""

    num_nodes: int
    edge_index: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    cap: np.ndarray
    pairs: np.ndarray
    threshold: float
    edge_function: str = "linear"
    name: str = "qosd"
    edge_keys: np.ndarray = field(init=False, repr=False)
    csr_structure: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        init=False, repr=False
    )

    def __post_init__(self) -> None:
        check_edge_function(self.edge_function)
        set_ = object.__setattr__
        set_(self, "edge_index", np.ascontiguousarray(self.edge_index, dtype=np.int64))
        for name in ("alpha", "beta", "cap"):
            set_(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.float64))
        set_(self, "pairs", np.ascontiguousarray(self.pairs, dtype=np.int64).reshape(-1, 2))
        set_(self, "threshold", float(self.threshold))
        self._check_graph()
        set_(self, "edge_keys", self.edge_index[0] * self.num_nodes + self.edge_index[1])
        set_(self, "csr_structure", {False: self._csr(False), True: self._csr(True)})
        self._check_pairs()

    @property
    def num_edges(self) -> int:
        return self.edge_index.shape[1]

    def weights(self, x: np.ndarray, edges: np.ndarray | None = None) -> np.ndarray:
        """Edge weights f_e(x_e) at perturbation x [E], or of `edges` only (x [len(edges)])."""
        if edges is None:
            return edge_weights(self.edge_function, self.alpha, self.beta, x)
        return edge_weights(self.edge_function, self.alpha[edges], self.beta[edges], x)

    def adjacency(self, x: np.ndarray, reverse: bool = False) -> csr_matrix:
        """Weighted adjacency (scipy CSR) at perturbation x, of the reversed graph if asked;
        the sparsity structure is built once, each call only fills in the weights."""
        order, indices, indptr = self.csr_structure[reverse]
        size = (self.num_nodes, self.num_nodes)
        return csr_matrix((self.weights(x)[order], indices, indptr), shape=size, copy=False)

    def _csr(self, reverse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edge order, column indices, row pointers) of the CSR form, rows = tails (heads
        when reversed)."""
        rows, columns = self.edge_index[::-1] if reverse else self.edge_index
        order = np.lexsort((columns, rows))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=self.num_nodes))])
        return order, columns[order].astype(np.int32), indptr.astype(np.int32)

    def edge_ids(self, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """Index of each edge (tail, head) in this instance (every one must exist)."""
        order = np.argsort(self.edge_keys)
        keys = tails * self.num_nodes + heads
        position = np.searchsorted(self.edge_keys, keys, sorter=order)
        found = order[np.minimum(position, len(order) - 1)]
        if not np.array_equal(self.edge_keys[found], keys):
            raise ValueError("edge_ids: some (tail, head) pairs are not edges of the graph")
        return found

    def to_data(self) -> Data:
        """torch-geometric view: edge_index, edge parameters, pairs, threshold, function id."""
        return Data(
            num_nodes=self.num_nodes,
            edge_index=torch.from_numpy(self.edge_index),
            alpha=torch.from_numpy(self.alpha),
            beta=torch.from_numpy(self.beta),
            cap=torch.from_numpy(self.cap),
            pairs=torch.from_numpy(self.pairs),
            threshold=torch.tensor([self.threshold], dtype=torch.float64),
            edge_function=torch.tensor([EDGE_FUNCTIONS.index(self.edge_function)]),
        )

    def _check_graph(self) -> None:
        if not isinstance(self.num_nodes, int | np.integer) or self.num_nodes < 2:
            raise ValueError(f"num_nodes must be an integer >= 2, got {self.num_nodes!r}")
        if self.edge_index.ndim != 2 or self.edge_index.shape[0] != 2:
            raise ValueError(f"edge_index must have shape [2, E], got {self.edge_index.shape}")
        num_edges = self.edge_index.shape[1]
        if num_edges == 0:
            raise ValueError("edge_index must hold at least one edge")
        if self.edge_index.min() < 0 or self.edge_index.max() >= self.num_nodes:
            raise ValueError(f"edge_index entries must lie in [0, {self.num_nodes})")
        if np.any(self.edge_index[0] == self.edge_index[1]):
            raise ValueError("edge_index must not contain self-loops")
        keys = self.edge_index[0] * self.num_nodes + self.edge_index[1]
        if np.unique(keys).size != num_edges:
            raise ValueError("edge_index must not contain parallel edges (repeated (u, v))")
        for name in ("alpha", "beta", "cap"):
            values = getattr(self, name)
            if values.shape != (num_edges,):
                raise ValueError(f"{name} must have shape [{num_edges}], got {values.shape}")
            if not np.all(np.isfinite(values)):
                raise ValueError(f"{name} must be finite")
        if np.any(self.cap < 0):
            raise ValueError(f"cap must be >= 0 on every edge, got min {self.cap.min()}")
        if np.any(self.alpha < 0):
            raise ValueError(f"alpha must be >= 0 on every edge, got min {self.alpha.min()}")
        if np.any(self.beta <= 0):
            raise ValueError(f"beta must be > 0 on every edge, got min {self.beta.min()}")
        if not (np.isfinite(self.threshold) and self.threshold > 0):
            raise ValueError(f"threshold must be a finite number > 0, got {self.threshold}")

    def _check_pairs(self) -> None:
        if self.pairs.shape[0] == 0:
            raise ValueError("pairs must hold at least one (source, target) pair")
        if self.pairs.min() < 0 or self.pairs.max() >= self.num_nodes:
            raise ValueError(f"pairs entries must lie in [0, {self.num_nodes})")
        if np.any(self.pairs[:, 0] == self.pairs[:, 1]):
            raise ValueError("pairs must have source != target")
        sources, targets = self.pairs[:, 0], self.pairs[:, 1]
        at_caps = dijkstra(self.adjacency(self.cap), indices=sources)
        reached = at_caps[np.arange(len(sources)), targets]
        unreachable = np.flatnonzero(~np.isfinite(reached))
        if unreachable.size:
            raise ValueError(
                "pairs: target unreachable from source for pairs "
                f"{self.pairs[unreachable].tolist()}"
            )
        short = np.flatnonzero(reached < self.threshold)
        if short.size:
            raise ValueError(
                f"threshold {self.threshold} is not attainable within the caps for pairs "
                f"{self.pairs[short].tolist()} (their distance with every edge at its cap is "
                f"{reached[short].round(6).tolist()})"
            )
