"""Shared test loop of the Hephaestus phases: solve every test graph, check, log beside the
baselines. A phase implements `solvers(batch)`: one function per graph mapping the pruned
greedy solution (passed in so no phase runs greedy twice) to its own feasible solution."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable

import numpy as np
from lightning import LightningModule
from torch_geometric.data import Batch

from optiforge.lightning_modules.hephaestus.evaluation import evaluate_instance

Solver = Callable[[np.ndarray], np.ndarray]


class HephaestusPhase(LightningModule):
    """Base LightningModule: `test_step` logs `test/<metric>` per instance (see evaluation)."""

    @abstractmethod
    def solvers(self, batch: Batch) -> list[Solver]:
        """One solver per graph of the batch, in batch order."""

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        """`test/seconds` = the solver's own time plus an equal share of the batched work
        (network passes, latent search) done in `solvers`."""
        start = time.perf_counter()
        solvers = self.solvers(batch)
        shared = (time.perf_counter() - start) / batch.num_graphs
        for instance, solve in zip(batch.instance, solvers, strict=True):
            metrics = evaluate_instance(instance, solve)
            metrics["seconds"] += shared
            for name, value in metrics.items():
                self.log(f"test/{name}", value, batch_size=1)
