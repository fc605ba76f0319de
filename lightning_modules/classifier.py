"""Reference supervised classifier: the quick default experiment and the optimizer testbed."""

from __future__ import annotations

from typing import Literal

import lightning as L
import torch
from torch import nn
from torchmetrics.classification import MulticlassAccuracy

from optiforge.lightning_modules.classifier_nets import mlp, small_cnn, small_transformer
from optiforge.optimizers.contract import wants_graph
from optiforge.optimizers.sharpness_pass import sharpness_pass


class Classifier(L.LightningModule):
    """Cross-entropy classifier over a small CNN, an MLP or a small transformer.

    It defines no `configure_optimizers`: the optimizer and LR scheduler come from the config
    (`optimizer:` / `lr_scheduler:` in YAML, `--optimizer` on the command line).

    Args:
        input_shape: shape of one input, e.g. (1, 8, 8) for digits or (18,) for COMPAS.
        num_classes: number of classes (>= 2).
        architecture: "cnn" (needs a (C, H, W) input), "mlp" or "transformer" (image rows or
            flat features as tokens).
        widths: conv channels (cnn), hidden sizes (mlp) or the model width repeated once per
            encoder layer (transformer), one entry per layer.
        dropout: dropout probability in [0, 1), before the head (inside every encoder layer for
            the transformer).
    """

    def __init__(
        self,
        input_shape: tuple[int, ...] = (1, 8, 8),
        num_classes: int = 10,
        architecture: Literal["cnn", "mlp", "transformer"] = "cnn",
        widths: tuple[int, ...] = (32, 64),
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"model.num_classes must be >= 2, got {num_classes}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"model.dropout must be in [0, 1), got {dropout}")
        if any(width < 1 for width in widths):
            raise ValueError(f"model.widths must all be >= 1, got {widths}")
        self.save_hyperparameters()
        builders = {"cnn": small_cnn, "mlp": mlp, "transformer": small_transformer}
        if architecture not in builders:
            raise ValueError(
                f"model.architecture must be one of {sorted(builders)}, got {architecture!r}"
            )
        self.net: nn.Module = builders[architecture](input_shape, num_classes, widths, dropout)
        self.metrics = nn.ModuleDict(
            {
                f"{split}_acc": MulticlassAccuracy(num_classes, average="micro")
                for split in ("train", "val", "test")
            }
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits [batch, num_classes] for inputs [batch, *input_shape]."""
        return self.net(x)

    def _log_split(
        self, split: str, logits: torch.Tensor, y: torch.Tensor, loss: torch.Tensor
    ) -> None:
        accuracy = self.metrics[f"{split}_acc"]
        accuracy(logits, y)
        on_step = split == "train"
        self.log(
            f"{split}/loss", loss, on_step=on_step, on_epoch=True, sync_dist=True, prog_bar=True
        )
        self.log(f"{split}/acc", accuracy, on_step=False, on_epoch=True, prog_bar=True)

    def backward(self, loss: torch.Tensor, *args: object, **kwargs: object) -> None:
        """Keep the graph of the gradients when an optimizer needs Hessian-vector products.

        Optimizers that declare `LoopNeeds.graph` and report `is_second_order = True` (the timm
        convention, e.g. NSGDHess with exact HVPs) differentiate the gradients once more inside
        their `step` (`optiforge.optimizers.contract.wants_graph`).
        """
        optimizers = self.trainer.optimizers if self._trainer is not None else []
        if any(wants_graph(optimizer) for optimizer in optimizers):
            kwargs["create_graph"] = True
        loss.backward(*args, **kwargs)

    def training_step(
        self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor | None:
        """Per-sample cross-entropy reduced as the optimizer's sharpness pass asks
        (`optiforge.optimizers.sharpness_pass`): the whole-batch mean for ordinary optimizers,
        micro-batches for m-SAM, ascent/descent rows for n-SAM, reweighted or probe-only passes for
        RW-SAM. Metrics are logged once per step, from the pass(es) at the unperturbed weights."""
        sharp = sharpness_pass(self.trainer.optimizers)
        x, y = sharp.select(batch)
        logits = self(x)
        losses = nn.functional.cross_entropy(logits, y, reduction="none")
        if sharp.log:
            self._log_split("train", logits.detach(), y, losses.detach().mean())
        return sharp.reduce(losses)

    def _evaluate(self, batch: tuple[torch.Tensor, torch.Tensor], split: str) -> torch.Tensor:
        x, y = batch
        logits = self(x)
        loss = nn.functional.cross_entropy(logits, y)
        self._log_split(split, logits, y, loss)
        return loss

    def validation_step(
        self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        return self._evaluate(batch, "val")

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self._evaluate(batch, "test")

    def predict_step(
        self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        """Predicted class per input."""
        return self(batch[0]).argmax(dim=-1)
