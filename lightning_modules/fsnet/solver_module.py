"""What FSNet and its baselines share: the family, the predictor, and the evaluation.

A subclass says how to train (`training_loss`) and how to turn parameters into a solution
(`solve`). Validation and test time `solve` on each batch and check every returned point with
the family's own residuals (independent of the method's internals), logging:
- objective_gap mean / max: (f(y) - f*) / |f*| against the checked reference y*,
- eq_violation and ineq_violation mean / max: per instance max |h| and max relu(g) (box rows
  included),
- feasible_rate: share of instances with both below `report_tolerance`,
- batch_seconds: wall time of `solve` per batch, reference_seconds: the reference solver's time
  on the same instances one after another, speedup: their ratio.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence

import lightning as L
import torch
from torch import Tensor
from torchmetrics import MaxMetric, MeanMetric, MetricCollection

from optiforge.lightning_modules.fsnet.predictor import Predictor
from optiforge.problems.constrained import ConstrainedFamily, ProblemSpec

REPORTED = ("objective_gap", "eq_violation", "ineq_violation")
DEFAULT_LR = 5e-4


class ConstrainedSolverModule(L.LightningModule):
    """Args:
    problem: the family (share it with the data module, e.g. by a YAML anchor).
    hidden_sizes: the predictor's hidden widths.
    report_tolerance: violation bound of `feasible_rate` (FSNet's target: 1e-5).
    output_size: predictor outputs if not all variables (DC3 predicts the independent ones;
        then the output is unbounded).
    """

    def __init__(
        self,
        problem: ProblemSpec,
        hidden_sizes: tuple[int, ...],
        report_tolerance: float,
        output_size: int | None = None,
    ) -> None:
        super().__init__()
        if not report_tolerance > 0:
            raise ValueError(f"report_tolerance must be positive, got {report_tolerance}")
        self.problem = problem
        self.report_tolerance = report_tolerance
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

    @staticmethod
    def _split_metrics() -> MetricCollection:
        metrics: dict[str, torch.nn.Module] = {}
        for name in REPORTED:
            metrics[f"{name}_mean"] = MeanMetric()
            metrics[f"{name}_max"] = MaxMetric()
        for name in ("feasible_rate", "batch_seconds", "reference_seconds", "speedup"):
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
        metrics["feasible_rate"].update(violation.within(self.report_tolerance).double())
        reference_total = float(reference_seconds.sum())
        metrics["batch_seconds"].update(seconds)
        metrics["reference_seconds"].update(reference_total)
        metrics["speedup"].update(reference_total / seconds)
        self.log_dict(
            {f"{split}/{name}": metric for name, metric in metrics.items()},
            batch_size=x.shape[0],
        )

    def validation_step(self, batch: Sequence[Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "val")

    def test_step(self, batch: Sequence[Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "test")
