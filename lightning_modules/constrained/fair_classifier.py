"""Fair classification under demographic parity: unconstrained, penalized, or equality-constrained.

Demographic parity asks every sensitive group g to receive positive predictions at the overall
rate. As a differentiable equality constraint per group (the paper's smoothed indicator):

    h_g = mean_{i in g} s(p_i) - mean_i s(p_i) = 0,   s(p) = sigmoid(T * (p - 1/2)),

with p_i the predicted probability of the positive class and T the temperature (8). The reported
gap uses hard predictions: max_g |P(yhat = 1 | g) - P(yhat = 1)|, per attribute, on held-out data.
"""

from __future__ import annotations

from typing import Literal

import lightning as L
import torch
import torch.nn.functional as F

from optiforge.lightning_modules.classifier_nets import mlp
from optiforge.lightning_modules.constrained.lagrangian import LagrangianMixin
from optiforge.optimizers.constraint_residual import equality
from optiforge.optimizers.dual_ascent import DualAscent

ConstraintMode = Literal["none", "penalty", "lagrangian"]


def group_means(values: torch.Tensor, groups: torch.Tensor, num_groups: int) -> torch.Tensor:
    """[num_groups] mean of `values` [B] within each group id of `groups` [B] (NaN if empty)."""
    sums = torch.zeros(num_groups, dtype=values.dtype, device=values.device)
    counts = torch.zeros(num_groups, dtype=values.dtype, device=values.device)
    sums = sums.index_add(0, groups, values)
    counts = counts.index_add(0, groups, torch.ones_like(values))
    return sums / counts


def parity_residuals(
    probabilities: torch.Tensor, groups: torch.Tensor, num_groups: int, temperature: float
) -> torch.Tensor:
    """[num_groups] smoothed positive rate of each group minus the overall one."""
    soft_positive = torch.sigmoid(temperature * (probabilities - 0.5))
    return group_means(soft_positive, groups, num_groups) - soft_positive.mean()


def fairness_metrics(
    probabilities: torch.Tensor,
    labels: torch.Tensor,
    groups: torch.Tensor,
    group_names: dict[str, tuple[str, ...]],
    temperature: float,
) -> dict[str, torch.Tensor]:
    """Accuracy, BCE, and per attribute the hard parity gap and the largest smoothed residual."""
    predictions = (probabilities > 0.5).to(probabilities.dtype)
    metrics = {
        "acc": (predictions == labels).to(probabilities.dtype).mean(),
        "loss": F.binary_cross_entropy(probabilities, labels.to(probabilities.dtype)),
    }
    gaps = []
    for column, (attribute, names) in enumerate(group_names.items()):
        rates = group_means(predictions, groups[:, column], len(names))
        gap = (rates - predictions.mean()).abs().nan_to_num(0.0).max()
        gaps.append(gap)
        metrics[f"parity_gap/{attribute}"] = gap
        soft = parity_residuals(probabilities, groups[:, column], len(names), temperature)
        metrics[f"parity_residual_max/{attribute}"] = soft.abs().nan_to_num(0.0).max()
    metrics["parity_gap"] = torch.stack(gaps).max()
    return metrics


class FairClassifier(LagrangianMixin, L.LightningModule):
    """Binary classifier (logistic regression or MLP) with per-group demographic parity.

    The group structure comes from the datamodule (`group_names`, e.g. `CompasFairnessDataModule`),
    batches are (features, label, groups [B, A]).

    Args:
        num_features: input width.
        hidden_sizes: MLP hidden widths; empty = logistic regression.
        constraint_mode: "none" (plain ERM), "penalty" (loss + penalty_weight * sum_g h_g^2),
            or "lagrangian" (each h_g = 0 an equality constraint enforced by `duals`).
        penalty_weight: weight of the squared-residual penalty ("penalty" mode only).
        temperature: T of the smoothed positive indicator.
        duals: the dual ascent of "lagrangian" mode (see `LagrangianMixin`).
    """

    def __init__(
        self,
        num_features: int = 18,
        hidden_sizes: tuple[int, ...] = (),
        constraint_mode: ConstraintMode = "lagrangian",
        penalty_weight: float = 0.0,
        temperature: float = 8.0,
        duals: DualAscent | None = None,
    ) -> None:
        super().__init__(duals=duals)
        if constraint_mode not in ("none", "penalty", "lagrangian"):
            raise ValueError(
                "model.constraint_mode must be one of ['lagrangian', 'none', 'penalty'], "
                f"got {constraint_mode!r}"
            )
        if num_features < 1:
            raise ValueError(f"model.num_features must be >= 1, got {num_features}")
        if not penalty_weight >= 0:
            raise ValueError(f"model.penalty_weight must be >= 0, got {penalty_weight}")
        if constraint_mode == "penalty" and penalty_weight == 0:
            raise ValueError("model.penalty_weight must be > 0 when constraint_mode is 'penalty'")
        if not temperature > 0:
            raise ValueError(f"model.temperature must be > 0, got {temperature}")
        self.save_hyperparameters(ignore=["duals"])
        self.net = mlp((num_features,), 1, tuple(hidden_sizes), dropout=0.0)
        self.constraint_mode = constraint_mode
        self.penalty_weight = penalty_weight
        self.temperature = temperature
        self.group_names: dict[str, tuple[str, ...]] = {}
        self._eval_outputs: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def setup(self, stage: str) -> None:
        datamodule = self.trainer.datamodule
        if not hasattr(datamodule, "group_names"):
            raise ValueError(
                "FairClassifier needs a datamodule with `group_names` and (x, y, groups) batches, "
                "e.g. optiforge.datamodules.CompasFairnessDataModule"
            )
        self.group_names = dict(datamodule.group_names)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Probability of the positive class, [B]."""
        return torch.sigmoid(self.net(x).squeeze(-1))

    def parity(self, probabilities: torch.Tensor, groups: torch.Tensor) -> dict[str, torch.Tensor]:
        """Smoothed parity residuals per attribute, [num_groups] each."""
        return {
            attribute: parity_residuals(
                probabilities, groups[:, column], len(names), self.temperature
            )
            for column, (attribute, names) in enumerate(self.group_names.items())
        }

    def training_step(
        self, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        x, y, groups = batch
        logits = self.net(x).squeeze(-1)
        loss = F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype))
        residuals = self.parity(torch.sigmoid(logits), groups)
        self.log("train/loss", loss, prog_bar=True)
        for attribute, residual in residuals.items():
            self.log(f"train/parity_residual_max/{attribute}", residual.detach().abs().max())
        if self.constraint_mode == "lagrangian":
            constraints = {f"parity_{a}": equality(r) for a, r in residuals.items()}
            return self.lagrangian(loss, constraints)
        if self.constraint_mode == "penalty":
            penalty = sum(residual.square().sum() for residual in residuals.values())
            return loss + self.penalty_weight * penalty
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        self._eval_outputs.append(self._predict(batch))

    def test_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        self._eval_outputs.append(self._predict(batch))

    def _predict(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        x, y, groups = batch
        return self(x), y, groups

    def on_validation_epoch_end(self) -> None:
        self._log_fairness("val")

    def on_test_epoch_end(self) -> None:
        self._log_fairness("test")

    def _log_fairness(self, split: str) -> None:
        """Accuracy, BCE, and per attribute the hard and smoothed parity gaps on the split."""
        probabilities, labels, groups = (
            torch.cat(part) for part in zip(*self._eval_outputs, strict=True)
        )
        self._eval_outputs.clear()
        probabilities = self.all_gather(probabilities).reshape(-1)
        labels = self.all_gather(labels).reshape(-1)
        groups = self.all_gather(groups).reshape(-1, groups.shape[-1])
        metrics = fairness_metrics(
            probabilities, labels, groups, self.group_names, self.temperature
        )
        self.log_dict(
            {f"{split}/{name}": value for name, value in metrics.items()},
            prog_bar=split == "val",
        )
