"""One line at the end of fit: best monitored metric, best checkpoint, W&B run directory."""

from __future__ import annotations

import lightning as L
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.utilities import rank_zero_info
from typing_extensions import override


def fit_summary_line(trainer: L.Trainer) -> str:
    """Compose the summary from the trainer's checkpoint callback and logger."""
    parts = [f"epochs={trainer.current_epoch}", f"steps={trainer.global_step}"]
    checkpoint = trainer.checkpoint_callback
    if checkpoint is not None and getattr(checkpoint, "monitor", None):
        score = checkpoint.best_model_score
        value = "n/a" if score is None else f"{float(score):.4f}"
        parts.append(f"best {checkpoint.monitor}={value}")
    if checkpoint is not None:
        parts.append(
            f"checkpoint={checkpoint.best_model_path or checkpoint.last_model_path or 'none'}"
        )
    logger = trainer.logger
    if isinstance(logger, WandbLogger) and logger._experiment is not None:
        parts.append(f"wandb={getattr(logger.experiment, 'dir', 'disabled')}")
    return "fit done: " + ", ".join(parts)


class FitSummary(Callback):
    """Prints `fit_summary_line` once, on rank zero, when `fit` ends."""

    @override
    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        rank_zero_info(fit_summary_line(trainer))
