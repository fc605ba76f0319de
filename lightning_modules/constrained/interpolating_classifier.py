"""Interpolating classifier: per-sample cross-entropy = 0 on a training subset (Barthakur & Chamon).

The objective is the mean cross-entropy over the training split; in "lagrangian" mode every
sample i of the constrained subset adds the equality constraint `CE_i = 0` (one multiplier per
sample, enforced by `LagrangianMixin`). "erm" minimizes the objective alone, the
baseline. Since CE_i > 0 for finite logits, the constraints are never met exactly: satisfaction is
reported as the share of constrained samples with CE_i <= `satisfaction_tol`.
"""

from __future__ import annotations

from typing import Literal

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics.classification import MulticlassAccuracy

from optiforge.lightning_modules.classifier_nets import mlp
from optiforge.lightning_modules.constrained.lagrangian import LagrangianMixin
from optiforge.optimizers.constraint_residual import equality
from optiforge.optimizers.dual_ascent import DualAscent

InterpolationMode = Literal["erm", "lagrangian"]
INTERPOLATION_MODES: tuple[InterpolationMode, ...] = ("erm", "lagrangian")


def constraint_satisfaction(
    logits: torch.Tensor, labels: torch.Tensor, tol: float
) -> dict[str, torch.Tensor]:
    """Largest per-sample CE, share with CE <= tol, and accuracy of the constrained samples."""
    losses = F.cross_entropy(logits, labels, reduction="none")
    return {
        "constrained_loss_max": losses.max(),
        "constrained_satisfied": (losses <= tol).to(logits.dtype).mean(),
        "constrained_acc": (logits.argmax(dim=-1) == labels).to(logits.dtype).mean(),
    }


class InterpolatingClassifier(LagrangianMixin, L.LightningModule):
    """MLP on digits trained on (x, y, constrained mask) full batches, e.g. from
    `optiforge.datamodules.digits_interpolation.DigitsInterpolationDataModule`.

    The optimizer comes from the config, as for `Classifier`. Training logs the objective
    (`train/loss`), `train/acc` and the satisfaction metrics of the constrained rows of the batch
    (`train/constrained_*`). Validation and test log loss and accuracy on their splits; at the
    end of testing the satisfaction metrics are recomputed at the tested weights on the
    datamodule's `constrained_split()` (`test/constrained_*`), so they describe the same weights
    as `test/acc` (with a best-checkpoint test these are not the last training step's weights).

    Args:
        input_shape: shape of one input ((1, 8, 8) for digits).
        num_classes: number of classes (>= 2).
        widths: MLP hidden sizes.
        constraint_mode: "erm" (mean CE only) or "lagrangian" (per-sample CE = 0 on the
            constrained subset, enforced by `duals`).
        satisfaction_tol: a constrained sample counts as satisfied when its CE <= this (> 0).
        duals: the dual ascent of "lagrangian" mode (see `LagrangianMixin`).
    """

    def __init__(
        self,
        input_shape: tuple[int, ...] = (1, 8, 8),
        num_classes: int = 10,
        widths: tuple[int, ...] = (128,),
        constraint_mode: InterpolationMode = "lagrangian",
        satisfaction_tol: float = 0.05,
        duals: DualAscent | None = None,
    ) -> None:
        super().__init__(duals=duals)
        if constraint_mode not in INTERPOLATION_MODES:
            raise ValueError(
                f"model.constraint_mode must be one of {list(INTERPOLATION_MODES)}, "
                f"got {constraint_mode!r}"
            )
        if num_classes < 2:
            raise ValueError(f"model.num_classes must be >= 2, got {num_classes}")
        if any(width < 1 for width in widths):
            raise ValueError(f"model.widths must all be >= 1, got {widths}")
        if not satisfaction_tol > 0:
            raise ValueError(f"model.satisfaction_tol must be > 0, got {satisfaction_tol}")
        self.save_hyperparameters(ignore=["duals"])
        self.net: nn.Module = mlp(input_shape, num_classes, tuple(widths), dropout=0.0)
        self.constraint_mode = constraint_mode
        self.satisfaction_tol = satisfaction_tol
        self.metrics = nn.ModuleDict(
            {
                f"{split}_acc": MulticlassAccuracy(num_classes, average="micro")
                for split in ("val", "test")
            }
        )

    def setup(self, stage: str) -> None:
        if not hasattr(self.trainer.datamodule, "constrained_split"):
            raise ValueError(
                "InterpolatingClassifier needs a datamodule with `constrained_split()` and "
                "(x, y, constrained) training batches, e.g. "
                "optiforge.datamodules.digits_interpolation.DigitsInterpolationDataModule"
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits [batch, num_classes] for inputs [batch, *input_shape]."""
        return self.net(x)

    def training_step(
        self, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        x, y, constrained = batch
        logits = self(x)
        losses = F.cross_entropy(logits, y, reduction="none")
        loss = losses.mean()
        detached = logits.detach()
        satisfaction = constraint_satisfaction(
            detached[constrained], y[constrained], self.satisfaction_tol
        )
        self.log("train/loss", loss, prog_bar=True)  # the objective; the mixin logs the rest
        self.log("train/acc", (detached.argmax(dim=-1) == y).to(loss.dtype).mean())
        self.log_dict({f"train/{name}": value for name, value in satisfaction.items()})
        if self.constraint_mode == "lagrangian":
            return self.lagrangian(loss, {"interpolation": equality(losses[constrained])})
        return loss

    def _evaluate(self, batch: tuple[torch.Tensor, torch.Tensor], split: str) -> None:
        x, y = batch
        logits = self(x)
        accuracy = self.metrics[f"{split}_acc"]
        accuracy(logits, y)
        self.log(f"{split}/loss", F.cross_entropy(logits, y), on_epoch=True)
        self.log(f"{split}/acc", accuracy, on_epoch=True, prog_bar=split == "val")

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self._evaluate(batch, "val")

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self._evaluate(batch, "test")

    def on_test_epoch_end(self) -> None:
        """Constraint satisfaction on the constrained training samples at the tested weights."""
        x, y = (t.to(self.device) for t in self.trainer.datamodule.constrained_split())
        with torch.no_grad():
            satisfaction = constraint_satisfaction(self(x), y, self.satisfaction_tol)
        self.log_dict({f"test/{name}": value for name, value in satisfaction.items()})
