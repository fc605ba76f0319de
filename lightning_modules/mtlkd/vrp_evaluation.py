"""Validation and test of every MTL-KD model (teachers, MTPOMO baseline, student): one path.

A subclass says how it solves a batch of instances in an inference mode (`solve`, also the
public entry of the benchmarks); this base times it in each split's mode,
checks every solution with the independent `optiforge.problems.vrp.validator`, and logs per
evaluation set name `<split>/<name>/{cost,gap,feasible,ms_per_instance}` (e.g. `test/VRPTW/n50/gap`)
and over all sets `<split>/{cost,gap,feasible}`; `gap` is in percent to the set's reference (PyVRP
or BKS), `feasible` the share of solutions the validator accepts (an infeasible solution is reported
with a warning and excluded from cost and gap). `test_step` returns {"instances", "solutions",
"costs", "name"} for `optiforge.callbacks.VRPRoutePlot`. `test` (and `train.py validate`) print one
compact table, a row per set (`evaluation_table`), instead of Lightning's table per dataloader.
"""

from __future__ import annotations

import time

import lightning as L
import torch
from lightning.pytorch.trainer.states import TrainerFn
from torch import Tensor, nn
from torchmetrics import MeanMetric

from optiforge.lightning_modules.mtlkd.evaluation_table import print_evaluation_table
from optiforge.lightning_modules.mtlkd.teacher_inference import InferenceMode
from optiforge.problems.vrp.eval_batch import VRPEvalBatch
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch

EVAL_METRICS = ("cost", "gap", "feasible")
SPLITS = ("val", "test")


class VRPEvaluationModule(L.LightningModule):
    """LightningModule base with validator-checked VRP evaluation (see the module doc).

    Subclasses set `self.inference` = {"val": mode, "test": mode} and implement `solve`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.metrics = nn.ModuleDict(
            {f"{split}_{name}": MeanMetric(nan_strategy="ignore") for split in SPLITS
             for name in EVAL_METRICS}
        )  # fmt: skip
        self.inference: dict[str, InferenceMode] = {"val": "greedy", "test": "greedy"}
        self._compact_table = False

    def solve(self, instances: VRPBatch, mode: InferenceMode) -> Tensor:
        """Node sequences [B, T] (validator format) for `instances` decoded in `mode`."""
        raise NotImplementedError

    def solve_instances(self, instances: VRPBatch, split: str) -> Tensor:
        """`solve` in `split`'s inference mode (what validation and test report)."""
        return self.solve(instances, self.inference[split])

    def _evaluate(self, batch: VRPEvalBatch, split: str) -> dict[str, object]:
        instances = batch.instances
        start = time.perf_counter()
        with torch.no_grad():
            solutions = self.solve_instances(instances, split)
        per_instance = torch.tensor(1e3 * (time.perf_counter() - start) / instances.batch_size)
        costs = validate_batch(instances, solutions, "warn", type(self).__name__)
        cost = torch.from_numpy(costs).to(solutions.device)
        gap = 100.0 * (cost - batch.reference_cost) / batch.reference_cost
        values = {"cost": cost, "gap": gap, "feasible": cost.isfinite().double()}
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
                # compute() already reduces over DDP ranks; sync_dist averages equal values
                value = metric.compute()
                self.log(f"{split}/{name}", value, prog_bar=name == "gap", sync_dist=True)
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

    def on_validation_start(self) -> None:
        if self.trainer.state.fn == TrainerFn.VALIDATING:
            self._compact_table = self.trainer.validate_loop.verbose
            self.trainer.validate_loop.verbose = False  # this module prints its own table

    def on_validation_end(self) -> None:
        if self.trainer.state.fn == TrainerFn.VALIDATING:
            self._print_table("val")

    def on_test_start(self) -> None:
        self._compact_table = self.trainer.test_loop.verbose
        self.trainer.test_loop.verbose = False  # this module prints its own table

    def on_test_end(self) -> None:
        self._print_table("test")

    def _print_table(self, split: str) -> None:
        if self._compact_table and self.trainer.is_global_zero:
            metrics = self.trainer.callback_metrics
            print_evaluation_table(metrics, split, f"{type(self).__name__} {split}")
