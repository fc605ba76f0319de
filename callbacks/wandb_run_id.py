"""Record the W&B run id in every checkpoint, so that resuming continues the same run.

`train.py fit --ckpt_path <ckpt>` reads `checkpoint_run_id` and gives it to the W&B logger
(`id`, with wandb's `resume="allow"`): the resumed fit logs into the run the checkpoint came
from, offline or online, and its default checkpoint folder `<project>/<run id>/checkpoints`
is the same folder.

Example (any Lightning project with a `WandbLogger`):
    >>> from optiforge.callbacks.wandb_run_id import WandbRunId
    >>> callback = WandbRunId()
"""

from __future__ import annotations

from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import WandbLogger
from typing_extensions import override

RUN_ID_KEY = "wandb_run_id"


def checkpoint_run_id(checkpoint: dict[str, Any]) -> str | None:
    """The W&B run id a checkpoint was written by (None: no W&B run or an older checkpoint)."""
    run_id = checkpoint.get(RUN_ID_KEY)
    return run_id if isinstance(run_id, str) else None


class WandbRunId(Callback):
    """Writes the id of the trainer's W&B run (if any) into each checkpoint it saves."""

    @override
    def on_save_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]
    ) -> None:
        for logger in trainer.loggers:
            if isinstance(logger, WandbLogger) and logger._experiment is not None:
                checkpoint[RUN_ID_KEY] = logger.version
