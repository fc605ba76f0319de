"""Where a DataModule's process sits among the trainer's processes."""

from __future__ import annotations

import lightning as L


def trainer_world(datamodule: L.LightningDataModule) -> tuple[int, int]:
    """(world size, global rank) of the trainer attached to `datamodule`, (1, 0) without one;
    rank-aware samplers use it so that k processes split exactly what one process would see."""
    trainer = datamodule.trainer
    if trainer is None:
        return 1, 0
    return trainer.world_size, trainer.global_rank
