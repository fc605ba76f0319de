"""What FSNet and its baselines share: the family, the predictor, and the evaluation.

A subclass says how to train (`training_loss`) and how to turn parameters into a solution
(`solve`). Validation and test time `solve` on each batch and check every returned point with
the family's own residuals (independent of the method's internals), logging:
- objective_gap mean / max: (f(y) - f*) / |f*| against the checked reference y*,
- eq_violation and ineq_violation mean / max: per instance max |h| and max relu(g) (box rows
  included),
- feasible_rate: share of instances with both below `report_tolerance`,
- batch_seconds: wall time of `solve` per batch, reference_seconds: the reference solver's time
  on the same instances one after another,
- speedup: the reference's time over the solve time, both counted only on the instances the
  method matches (feasible at `report_tolerance` and objective gap <= `speedup_max_gap`; the
  batch time is shared out equally over a batch's instances); NaN when it matches none, so an
  untrained network that is fast but 80 % off the optimum reports no speedup,
- speedup_share: the share of instances that count towards the speedup.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence

import lightning as L
import torch
from torch import Tensor
from torchmetrics import MaxMetric, MeanMetric, MetricCollection, SumMetric

from optiforge.lightning_modules.fsnet.predictor import Predictor
from optiforge.problems.constrained import ConstrainedFamily, ProblemSpec

REPORTED = ("objective_gap", "eq_violation", "ineq_violation")
DEFAULT_LR = 5e-4
DEFAULT_SPEEDUP_MAX_GAP = 1e-2
SPEEDUP_SUMS = ("matched_reference_seconds", "matched_solve_seconds", "matched", "instances")


class ConstrainedSolverModule(L.LightningModule):
    """Args:
    problem: the family (share it with the data module, e.g. by a YAML anchor).
    hidden_sizes: the predictor's hidden widths.
    report_tolerance: violation bound of `feasible_rate` (FSNet's target: 1e-5).
    output_size: predictor outputs if not all variables (DC3 predicts the independent ones;
        then the output is unbounded).
    speedup_max_gap: the largest objective gap (f(y) - f*) / |f*| at which an instance counts
        towards `speedup` (the accuracy the speedup is matched at; > 0).
    """

    def __init__(
        self,
        problem: ProblemSpec,
        hidden_sizes: tuple[int, ...],
        report_tolerance: float,
        output_size: int | None = None,
        speedup_max_gap: float = DEFAULT_SPEEDUP_MAX_GAP,
    ) -> None:
        super().__init__()
        if not report_tolerance > 0:
            raise ValueError(f"report_tolerance must be positive, got {report_tolerance}")
        if not speedup_max_gap > 0:
            raise ValueError(f"speedup_max_gap must be positive, got {speedup_max_gap}")
        self.problem = problem
        self.report_tolerance = report_tolerance
        self.speedup_max_gap = speedup_max_gap
        self.family: ConstrainedFamily = problem.build()
        self.predictor = Predictor(
            self.family.num_eq,
            self.family.num_vars if output_size is None else output_size,
            tuple(hidden_sizes),
            self.family.box_bound if output_size is None else None,
        )
        self.metrics = torch.nn.ModuleDict(
            {split: self._split_metrics() for split in ("val", "test")}
        )
        self.speedup_sums = torch.nn.ModuleDict(
            {
                split: MetricCollection({name: SumMetric() for name in SPEEDUP_SUMS})
                for split in ("val", "test")
            }
        )

    @staticmethod
    def _split_metrics() -> MetricCollection:
        metrics: dict[str, torch.nn.Module] = {}
        for name in REPORTED:
            metrics[f"{name}_mean"] = MeanMetric()
            metrics[f"{name}_max"] = MaxMetric()
        for name in ("feasible_rate", "batch_seconds", "reference_seconds"):
            metrics[name] = MeanMetric()
        return MetricCollection(metrics)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        """Adam at FSNet's 5e-4 unless the config names an optimizer (LightningCLI overrides)."""
        return torch.optim.Adam(self.parameters(), lr=DEFAULT_LR)

    @abstractmethod
    def solve(self, x: Tensor) -> Tensor:
        """Solutions y [B, num_vars] for parameters x [B, num_eq] (evaluation path)."""

    @abstractmethod
    def training_loss(self, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        """The training loss on a batch of parameters and extra scalars to log."""

    def objective_and_penalties(self, y: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Batch means of f(y), ||h(y)||^2 and ||relu(g(y))||^2 (the baselines' loss terms)."""
        objective = self.family.objective(y, x).mean()
        eq = self.family.eq_residual(y, x).square().sum(dim=-1).mean()
        ineq = self.family.ineq_residual(y, x).relu().square().sum(dim=-1).mean()
        return objective, eq, ineq

    def setup(self, stage: str) -> None:
        """Refuse a data module drawn from another family (the model would learn the wrong
        problem without any error)."""
        datamodule = getattr(self.trainer, "datamodule", None) if self._trainer else None
        problem = getattr(datamodule, "problem", None)
        if problem is not None and problem != self.problem:
            raise ValueError(
                f"model.problem {self.problem} differs from data.problem {problem}; "
                "give both the same problem block"
            )

    def on_fit_start(self) -> None:
        self.family = self.family.to(self.device)

    on_validation_start = on_test_start = on_fit_start

    def training_step(self, batch: Sequence[Tensor], batch_idx: int) -> Tensor:
        (x,) = batch
        loss, extras = self.training_loss(x)
        self.log("train/loss", loss, prog_bar=True, batch_size=x.shape[0])
        self.log_dict({f"train/{k}": v for k, v in extras.items()}, batch_size=x.shape[0])
        return loss

    def timed_solve(self, x: Tensor) -> tuple[Tensor, float]:
        """`solve` outside inference mode (the correction steps need autograd), timed; x is
        checked first (shape, finite, inside the family's parameter box)."""
        with torch.inference_mode(False), torch.no_grad():
            x = x.clone() if x.is_inference() else x
            self.family.check_feasible_parameters(x)
            start = time.perf_counter()
            y = self.solve(x)
            return y, time.perf_counter() - start

    def evaluate(self, batch: Sequence[Tensor], split: str) -> None:
        x, _, reference_objective, reference_seconds = batch
        with torch.inference_mode(False), torch.no_grad():
            x = x.clone()  # Lightning evaluates in inference mode; autograd needs a normal tensor
            y, seconds = self.timed_solve(x)
            violation = self.family.violation(y, x)
            objective = self.family.objective(y, x)
        gap = (objective - reference_objective) / reference_objective.abs()
        values = {
            "objective_gap": gap,
            "eq_violation": violation.max_eq,
            "ineq_violation": violation.max_ineq,
        }
        metrics = self.metrics[split]
        for name, value in values.items():
            metrics[f"{name}_mean"].update(value)
            metrics[f"{name}_max"].update(value)
        feasible = violation.within(self.report_tolerance)
        metrics["feasible_rate"].update(feasible.double())
        metrics["batch_seconds"].update(seconds)
        metrics["reference_seconds"].update(float(reference_seconds.sum()))
        matched = feasible & (gap <= self.speedup_max_gap)
        sums = self.speedup_sums[split]
        sums["matched_reference_seconds"].update(reference_seconds[matched].sum().double())
        sums["matched_solve_seconds"].update(seconds * float(matched.double().mean()))
        sums["matched"].update(matched.double().sum())
        sums["instances"].update(float(x.shape[0]))
        self.log_dict(
            {f"{split}/{name}": metric for name, metric in metrics.items()},
            batch_size=x.shape[0],
        )

    def log_speedup(self, split: str) -> None:
        """Log `speedup` and `speedup_share` over the epoch's matched instances (module doc)."""
        sums = {name: float(value) for name, value in self.speedup_sums[split].compute().items()}
        self.speedup_sums[split].reset()
        if sums["instances"] == 0:
            return
        matched = sums["matched"]
        speedup = (
            sums["matched_reference_seconds"] / sums["matched_solve_seconds"]
            if matched > 0 and sums["matched_solve_seconds"] > 0
            else float("nan")
        )
        self.log(f"{split}/speedup", speedup)
        self.log(f"{split}/speedup_share", matched / sums["instances"])

    def on_validation_epoch_end(self) -> None:
        self.log_speedup("val")

    def on_test_epoch_end(self) -> None:
        self.log_speedup("test")

    def validation_step(self, batch: Sequence[Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "val")

    def test_step(self, batch: Sequence[Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "test")
