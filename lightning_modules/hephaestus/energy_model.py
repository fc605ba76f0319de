"""Energy model of solution quality: E(s | graph) ~ budget after PPS repair / best known.

A per-edge MLP on [edge state, s_e] averaged per graph, plus a
graph-level bias from the graph embedding, regresses the (log) ratio of the repaired budget of
a raw stress vector s to the best classical budget of its instance. Low energy = a raw
proposal that PPS turns into a cheap feasible solution. Morph uses it two ways: to weight its
training solutions (softmax of -E / temperature within an instance) and to pull decoded
samples toward low energy (with the energy's weights frozen for that term).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from optiforge.lightning_modules.hephaestus.conditional_vae import per_graph_sum


class SolutionEnergy(nn.Module):
    """Args: edge_dim / graph_dim: condition sizes; hidden: MLP width."""

    def __init__(self, edge_dim: int, graph_dim: int, hidden: int = 64) -> None:
        super().__init__()
        self.edge_state_term = nn.Linear(edge_dim, hidden)
        self.edge_stress_term = nn.Linear(1, hidden, bias=False)
        self.edge_term = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 1))
        self.graph_term = nn.Sequential(
            nn.Linear(graph_dim, hidden), nn.SiLU(), nn.Linear(hidden, 1)
        )

    def forward(
        self, edge_state: Tensor, graph: Tensor, stress: Tensor, edge_batch: Tensor
    ) -> Tensor:
        """Energies [..., B] of stress vectors [..., E]."""
        first = self.edge_state_term(edge_state) + self.edge_stress_term(stress.unsqueeze(-1))
        per_edge = self.edge_term(first).squeeze(-1)
        num_graphs = graph.shape[0]
        edges_per_graph = torch.bincount(edge_batch, minlength=num_graphs).clamp(min=1)
        return per_graph_sum(per_edge, edge_batch, num_graphs) / edges_per_graph + self.graph_term(
            graph
        ).squeeze(-1)
