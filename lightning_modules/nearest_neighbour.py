"""1-nearest-neighbour classifier as a LightningModule: the unstable, interpolating algorithm of
the generalization diagnostic (`optiforge.algorithms.generalization`)."""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import torch


class NearestNeighbour(L.LightningModule):
    """Memorizes the training set and predicts the label of the nearest training input (Euclidean
    distance on the flattened input, ties to the first stored sample).

    "Training" stores every batch of the epoch; the stored set is a persistent buffer, so a
    checkpoint holds it. It logs `{split}/acc` (train: the 1-NN's accuracy on its own training
    set, 1.0 unless two equal inputs carry different labels) and `{split}/loss`, the 0-1 loss
    1 - acc. It has no parameters and no optimizer. Single process (no DDP gathering); the
    training accuracy computes all n x n distances, so it suits small data sets.

    Args:
        input_shape: shape of one input, e.g. (1, 8, 8) for digits.
        num_classes: number of classes (>= 2).
    """

    def __init__(self, input_shape: tuple[int, ...] = (1, 8, 8), num_classes: int = 10) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"model.num_classes must be >= 2, got {num_classes}")
        if not input_shape or any(side < 1 for side in input_shape):
            raise ValueError(f"model.input_shape must be positive sizes, got {input_shape}")
        self.save_hyperparameters()
        self.register_buffer("memory_x", torch.empty(0, math.prod(input_shape)))
        self.register_buffer("memory_y", torch.empty(0, dtype=torch.long))
        self._seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predicted class [batch] for inputs [batch, *input_shape]."""
        distances = torch.cdist(x.flatten(1), self.memory_x)
        return self.memory_y[distances.argmin(dim=1)]

    def configure_optimizers(self) -> None:
        """Nothing to optimize: fitting is memorization."""
        return None

    def on_train_epoch_start(self) -> None:
        self._seen = []

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        """Store the batch (no loss, no gradient step)."""
        x, y = batch[0], batch[1]
        self._seen.append((x.flatten(1).detach(), y.detach()))

    def _store_seen(self) -> None:
        """Make this epoch's batches the memory (called before any evaluation uses it)."""
        if self._seen:
            self.memory_x = torch.cat([x for x, _ in self._seen])
            self.memory_y = torch.cat([y for _, y in self._seen])
            self._seen = []

    def _log_accuracy(self, split: str, x: torch.Tensor, y: torch.Tensor) -> None:
        accuracy = (self(x) == y).float().mean()
        on_epoch = {"on_step": False, "on_epoch": True, "batch_size": len(y)}
        self.log(f"{split}/acc", accuracy, prog_bar=True, **on_epoch)
        self.log(f"{split}/loss", 1.0 - accuracy, **on_epoch)

    def on_train_epoch_end(self) -> None:
        """The empirical 0-1 loss of the fitted rule on its own training set."""
        self._store_seen()
        self._log_accuracy("train", self.memory_x, self.memory_y)

    def on_validation_start(self) -> None:
        self._store_seen()

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        if len(self.memory_y):  # Lightning's sanity check runs before anything is stored
            self._log_accuracy("val", batch[0], batch[1])

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self._log_accuracy("test", batch[0], batch[1])

    def predict_step(
        self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        """Predicted class per input."""
        return self(batch[0])

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Size the memory buffers like the checkpoint's before Lightning loads them."""
        state = checkpoint["state_dict"]
        self.memory_x = torch.empty_like(state["memory_x"])
        self.memory_y = torch.empty_like(state["memory_y"])
