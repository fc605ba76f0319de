"""The real Gnutella08 QoSD instance (SNAP p2p-Gnutella08, prepared by the linear-QoSD GNN
baseline's authors): 6301 nodes, 20777 directed edges with alpha, beta, initial weight =
alpha + beta, an integer cap per edge, and 10 critical pairs.

The data ship no threshold; T = `threshold_factor` x the median unperturbed pair distance (the
default 1.0 gives T = 20.8: half the pairs need perturbation, and every pair can reach T within
its caps under all three edge functions; the log family's ceiling is 20.9 on pair 4158 -> 604).
Pairs that cannot reach T within the caps are an error (the instance check names them), never
dropped silently.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from optiforge.problems.data_paths import data_path
from optiforge.problems.qosd.checker import pair_distances
from optiforge.problems.qosd.instance import QoSDInstance

GNUTELLA_DIR = "gnutella08"
COLUMNS = ("u", "v", "alpha", "beta", "weight", "max_budget")


def gnutella08_files(directory: str | Path | None = None) -> tuple[Path, Path]:
    """(graph.txt, pairs.txt) in `directory` (None: the data folder's gnutella08/); a caller
    can check that they exist before any work starts."""
    folder = Path(directory) if directory is not None else data_path(GNUTELLA_DIR)
    return folder / "graph.txt", folder / "pairs.txt"


def load_gnutella08(
    edge_function: str = "linear",
    threshold_factor: float = 1.0,
    directory: str | Path | None = None,
) -> QoSDInstance:
    """The Gnutella08 instance with the given edge-weight family and threshold factor."""
    if not threshold_factor > 0:
        raise ValueError(f"threshold_factor must be > 0, got {threshold_factor}")
    graph_file, pairs_file = gnutella08_files(directory)
    for path in (graph_file, pairs_file):
        if not path.is_file():
            raise FileNotFoundError(f"Gnutella08 file missing: {path}")
    header = graph_file.read_text().splitlines()[0].split(",")
    if tuple(header) != COLUMNS:
        raise ValueError(f"{graph_file}: expected columns {COLUMNS}, got {tuple(header)}")
    table = np.loadtxt(graph_file, delimiter=",", skiprows=1)
    pairs = np.loadtxt(pairs_file, dtype=np.int64).reshape(-1, 2)
    edge_index = table[:, :2].astype(np.int64).T
    alpha, beta, weight, cap = table[:, 2], table[:, 3], table[:, 4], table[:, 5]
    if not np.allclose(alpha + beta, weight):
        raise ValueError(f"{graph_file}: weight != alpha + beta, the edge functions would not fit")
    num_nodes = int(max(edge_index.max(), pairs.max())) + 1
    unperturbed = QoSDInstance(
        num_nodes, edge_index, alpha, beta, cap, pairs, 1e-12, edge_function, "gnutella08"
    )
    distances = pair_distances(unperturbed, np.zeros(len(alpha)))
    threshold = threshold_factor * float(np.median(distances))
    return QoSDInstance(
        num_nodes,
        edge_index,
        alpha,
        beta,
        cap,
        pairs,
        threshold,
        edge_function,
        f"gnutella08_{edge_function}_T{threshold_factor:g}",
    )
