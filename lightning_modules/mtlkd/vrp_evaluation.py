"""Validation and test of every MTL-KD model (teachers, MTPOMO baseline, student): one path.

A subclass says how it solves a batch of instances (`solve_instances`); this base times it,
checks every solution with the independent `problems.vrp.validator`, and logs per evaluation
set name `<split>/<name>/{cost,gap,feasible,ms_per_instance}` (e.g. `test/VRPTW/n50/gap`) and
over all sets `<split>/{cost,gap,feasible}`; `gap` is in percent to the set's reference (PyVRP
or BKS), `feasible` the share of solutions the validator accepts (an infeasible solution is
reported with a warning and excluded from cost and gap). `test_step` returns {"instances",
"solutions", "costs", "name"} for `callbacks.VRPRoutePlot`.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

import lightning as L
import numpy as np
import torch
from torch import Tensor, nn
from torchmetrics import MeanMetric

from problems.vrp.instance import VRPBatch
from problems.vrp.validator import InfeasibleSolution, validate

if TYPE_CHECKING:
    from datamodules.vrp import VRPEvalBatch

EVAL_METRICS = ("cost", "gap", "feasible")
SPLITS = ("val", "test")


def validated_costs(
    instances: VRPBatch, solutions: Tensor, solver: str = "solver"
) -> tuple[Tensor, Tensor]:
    """Validator costs [B] (NaN where infeasible, with a warning naming `solver`) and
    feasibility [B] bool of `solutions` [B, T]; returned on the solutions' device."""
    cpu = instances.to("cpu")
    sequences = solutions.cpu().numpy()
    costs = np.full(instances.batch_size, np.nan)
    for row in range(instances.batch_size):
        try:
            costs[row] = validate(cpu.index(row), sequences[row], name=f"instance {row}")
        except InfeasibleSolution as error:
            warnings.warn(f"{solver}: infeasible solution: {error}", stacklevel=2)
    cost = torch.from_numpy(costs).to(solutions.device)
    return cost, cost.isfinite()


class VRPEvaluationModule(L.LightningModule):
    """LightningModule base with validator-checked VRP evaluation (see the module doc)."""

    def __init__(self) -> None:
        super().__init__()
        self.metrics = nn.ModuleDict(
            {f"{split}_{name}": MeanMetric(nan_strategy="ignore") for split in SPLITS
             for name in EVAL_METRICS}
        )  # fmt: skip

    def solve_instances(self, instances: VRPBatch, split: str) -> Tensor:
        """Node sequences [B, T] (validator format) for `instances` in `split`'s mode."""
        raise NotImplementedError

    def _evaluate(self, batch: VRPEvalBatch, split: str) -> dict[str, object]:
        instances = batch.instances
        start = time.perf_counter()
        with torch.no_grad():
            solutions = self.solve_instances(instances, split)
        per_instance = torch.tensor(1e3 * (time.perf_counter() - start) / instances.batch_size)
        cost, feasible = validated_costs(instances, solutions, type(self).__name__)
        gap = 100.0 * (cost - batch.reference_cost) / batch.reference_cost
        values = {"cost": cost, "gap": gap, "feasible": feasible.double()}
        for name, value in values.items():
            self.metrics[f"{split}_{name}"].update(value)
            known = value[value.isfinite()]
            self.log(
                f"{split}/{batch.name}/{name}",
                known.mean() if known.numel() else torch.tensor(float("nan")),
                batch_size=max(known.numel(), 1),
                add_dataloader_idx=False,
                sync_dist=True,
            )
        self.log(
            f"{split}/{batch.name}/ms_per_instance",
            per_instance,
            batch_size=instances.batch_size,
            add_dataloader_idx=False,
            sync_dist=True,
        )
        return {"instances": instances, "solutions": solutions, "costs": cost, "name": batch.name}

    def _log_totals(self, split: str) -> None:
        for name in EVAL_METRICS:
            metric = self.metrics[f"{split}_{name}"]
            if metric.update_called:
                self.log(f"{split}/{name}", metric.compute(), prog_bar=name == "gap")
            metric.reset()

    def validation_step(
        self, batch: VRPEvalBatch, batch_idx: int, dataloader_idx: int = 0
    ) -> dict[str, object]:
        return self._evaluate(batch, "val")

    def test_step(
        self, batch: VRPEvalBatch, batch_idx: int, dataloader_idx: int = 0
    ) -> dict[str, object]:
        return self._evaluate(batch, "test")

    def on_validation_epoch_end(self) -> None:
        self._log_totals("val")

    def on_test_epoch_end(self) -> None:
        self._log_totals("test")
