"""`ModelCheckpoint` whose `last.ckpt` is always the latest state of the run.

Lightning 2.6's `save_last=True` copies `last.ckpt` only when a top-k checkpoint is saved at
that step: with a `monitor`, an epoch that does not improve leaves `last.ckpt` at the last
improvement, and a run stopped by `max_time` or `max_steps` mid-epoch never saves its final
state. Resuming from such a `last.ckpt` silently repeats epochs. This subclass also writes
`last.ckpt` after every checkpointing hook in which no top-k file was saved, and once more
when training ends if the final step is not saved yet, so that `--ckpt_path last.ckpt`
continues exactly where the run stopped. A resumed fit writes into the folder it resumes
from, so Lightning's "Checkpoint directory ... exists and is not empty" warning is left out
then (it still warns when a new run would mix its files with another run's).

Example (any Lightning project):
    >>> from optiforge.callbacks import LatestCheckpoint
    >>> callback = LatestCheckpoint(monitor="val/loss", save_last=True)
"""

from __future__ import annotations

import warnings

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.utilities import rank_zero_warn
from typing_extensions import override


class LatestCheckpoint(ModelCheckpoint):
    """`ModelCheckpoint` (same arguments) with an always-current `last.ckpt`."""

    def _save_latest(self, trainer: L.Trainer, on_train_epoch_end: bool) -> None:
        """Write last.ckpt unless Lightning just saved this step or this hook is not the one
        that checkpoints (train epoch end vs validation end)."""
        if on_train_epoch_end != self._should_save_on_train_epoch_end(trainer):
            return
        if self.save_last and not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    @override
    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """Hold back the "not empty" warning until `on_train_start` knows whether this fit
        resumed (the checkpoint is restored after `setup`)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            super().setup(trainer, pl_module, stage)
        self._held_warnings = [w.message for w in caught]

    @override
    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        super().on_train_start(trainer, pl_module)
        for message in getattr(self, "_held_warnings", []):
            if trainer.ckpt_path is None or "not empty" not in str(message):
                rank_zero_warn(str(message))
        self._held_warnings = []

    @override
    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        super().on_train_epoch_end(trainer, pl_module)
        self._save_latest(trainer, on_train_epoch_end=True)

    @override
    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        super().on_validation_end(trainer, pl_module)
        self._save_latest(trainer, on_train_epoch_end=False)

    @override
    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        super().on_train_end(trainer, pl_module)
        if self.save_last and not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))
