"""A Trainer (CPU unless told) without logger, checkpoints, progress bar, summary or validation:
what the benchmarks (and their tests) use to train models whose metrics they collect themselves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L


def quiet_trainer(
    epochs: int, root: Path | None = None, device: str = "cpu", **options: Any
) -> L.Trainer:
    """`epochs` epochs on `device` ("cpu" or "cuda"), with nothing written but under `root`;
    `options` are further Trainer arguments (they override these defaults)."""
    settings: dict[str, Any] = {
        "max_epochs": epochs,
        "accelerator": "gpu" if device == "cuda" else "cpu",
        "devices": 1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "limit_val_batches": 0,
        "default_root_dir": root,
    }
    return L.Trainer(**{**settings, **options})
