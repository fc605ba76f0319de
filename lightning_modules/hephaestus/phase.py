"""Shared test loop of the Hephaestus phases: solve every test graph, check, log beside the
baselines. A phase implements `solvers(batch)`: one function per graph mapping the pruned
greedy solution (passed in so no phase runs greedy twice) to its own feasible solution."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable

import numpy as np
from lightning import LightningModule
from torch_geometric.data import Batch

from lightning_modules.hephaestus.evaluation import evaluate_instance

Solver = Callable[[np.ndarray], np.ndarray]


class HephaestusPhase(LightningModule):
    """Base LightningModule: `test_step` logs `test/<metric>` per instance (see evaluation)."""

    @abstractmethod
    def solvers(self, batch: Batch) -> list[Solver]:
        """One solver per graph of the batch, in batch order."""

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        for instance, solve in zip(batch.instance, self.solvers(batch), strict=True):
            for name, value in evaluate_instance(instance, solve).items():
                self.log(f"test/{name}", value, batch_size=1)
