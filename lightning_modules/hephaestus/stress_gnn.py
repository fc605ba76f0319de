"""Edge-stress GNN of Forge: message passing with edge features, one logit per edge.

Nodes and edges are embedded by linear maps, `num_layers` GINE convolutions (edge-aware GIN)
with residual connections mix information along the directed graph (messages flow tail ->
head) and its reverse (so a node sees both what reaches it and what it reaches), and an MLP
on [h_tail, h_head, edge embedding] scores each edge. sigmoid(score) is the predicted share
of the edge's cap that a good solution spends on it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import GINEConv

from optiforge.problems.qosd.features import EDGE_FEATURES, NODE_FEATURES


def mlp(width_in: int, width: int, width_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(width_in, width), nn.SiLU(), nn.Linear(width, width_out))


class EdgeStressGNN(nn.Module):
    """Per-edge stress logits [E] and a graph embedding [B, hidden] (mean of node states)."""

    def __init__(self, hidden: int = 64, num_layers: int = 3) -> None:
        super().__init__()
        if hidden < 1 or num_layers < 1:
            raise ValueError(f"hidden and num_layers must be >= 1, got {hidden}, {num_layers}")
        self.node_in = nn.Linear(NODE_FEATURES, hidden)
        self.edge_in = nn.Linear(EDGE_FEATURES, hidden)
        self.forward_convs = nn.ModuleList(
            GINEConv(mlp(hidden, hidden, hidden), edge_dim=hidden) for _ in range(num_layers)
        )
        self.backward_convs = nn.ModuleList(
            GINEConv(mlp(hidden, hidden, hidden), edge_dim=hidden) for _ in range(num_layers)
        )
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(num_layers))
        self.edge_out = mlp(3 * hidden, hidden, 1)

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor, batch: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """(edge logits [E], edge states [E, 3 hidden], graph embedding [B, hidden])."""
        h = self.node_in(x)
        e = self.edge_in(edge_attr)
        reverse = edge_index.flip(0)
        for forward_conv, backward_conv, norm in zip(
            self.forward_convs, self.backward_convs, self.norms, strict=True
        ):
            h = norm(h + forward_conv(h, edge_index, e) + backward_conv(h, reverse, e))
        tail, head = edge_index
        edge_state = torch.cat([h[tail], h[head], e], dim=-1)
        num_graphs = int(batch.max()) + 1 if batch.numel() else 0
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
        graph = torch.zeros(num_graphs, h.shape[-1], dtype=h.dtype, device=h.device)
        graph = graph.index_add_(0, batch, h)
        return self.edge_out(edge_state).squeeze(-1), edge_state, graph / counts
