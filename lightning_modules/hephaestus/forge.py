"""Forge: learn per-edge stress with a GNN, then Predictive Path-Stressing makes it feasible.

Training: the GNN's sigmoid(logits) regress the label x*/cap of the best classical solution
(binary cross-entropy with soft targets; the LP optimum on linear instances). Validation:
the loss and the PPS budget relative to that label's budget. Test: PPS solutions beside the
classical baselines (`evaluation.evaluate_instance`), every one checked by the exact checker.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Batch

from optiforge.lightning_modules.hephaestus.phase import HephaestusPhase, Solver
from optiforge.lightning_modules.hephaestus.predictive_path_stressing import (
    predictive_path_stressing,
)
from optiforge.lightning_modules.hephaestus.stress_gnn import EdgeStressGNN


def edges_per_graph(batch: Batch) -> list[int]:
    """Number of edges of each graph of the batch, in batch order (edges are grouped by graph)."""
    return torch.bincount(batch.batch[batch.edge_index[0]], minlength=batch.num_graphs).tolist()


class Forge(HephaestusPhase):
    """Args:
    hidden: GNN width. num_layers: message-passing layers.
    lr: Adam learning rate (used when no optimizer is configured).
    """

    def __init__(self, hidden: int = 64, num_layers: int = 3, lr: float = 1e-3) -> None:
        super().__init__()
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.save_hyperparameters()
        self.gnn = EdgeStressGNN(hidden, num_layers)

    def forward(self, batch: Batch) -> Tensor:
        """Edge stress logits [E] of the batch."""
        logits, _, _ = self.gnn(batch.x, batch.edge_index, batch.edge_attr, batch.batch)
        return logits

    def predicted_stress(self, batch: Batch) -> list[np.ndarray]:
        """sigmoid(logits) split per graph (numpy float64)."""
        stress = torch.sigmoid(self(batch)).detach().double()
        return [part.cpu().numpy() for part in torch.split(stress, edges_per_graph(batch))]

    def loss(self, batch: Batch) -> Tensor:
        return F.binary_cross_entropy_with_logits(self(batch), batch.stress)

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        loss = self.loss(batch)
        self.log("train/loss", loss, batch_size=batch.num_graphs, prog_bar=True)
        return loss

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self.log("val/loss", self.loss(batch), batch_size=batch.num_graphs, prog_bar=True)
        ratios = []
        for instance, stress, label in zip(
            batch.instance, self.predicted_stress(batch), self.split_labels(batch), strict=True
        ):
            x = predictive_path_stressing(instance, stress)
            ratios.append(x.sum() / max(float((label * instance.cap).sum()), 1e-12))
        self.log("val/budget_ratio_best", float(np.mean(ratios)), batch_size=batch.num_graphs)

    def solvers(self, batch: Batch) -> list[Solver]:
        """PPS on each graph's predicted stress."""
        return [
            partial(lambda greedy, i, s: predictive_path_stressing(i, s, greedy), i=i, s=s)
            for i, s in zip(batch.instance, self.predicted_stress(batch), strict=True)
        ]

    @staticmethod
    def split_labels(batch: Batch) -> list[np.ndarray]:
        return [
            part.double().cpu().numpy()
            for part in torch.split(batch.stress, edges_per_graph(batch))
        ]

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
