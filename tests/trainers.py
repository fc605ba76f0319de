"""Trainers for tests: a quiet real one, and a stand-in with only what
`OptimizerAdapter.on_fit_start` reads."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import lightning as L


def quiet_trainer(**options: Any) -> L.Trainer:
    """A CPU Trainer without logger, checkpoints, progress bar or summary, plus `options`."""
    quiet = {
        "accelerator": "cpu",
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
    }
    return L.Trainer(**{**quiet, **options})


def fake_trainer(optimizers: list[Any], **overrides: Any) -> SimpleNamespace:
    """A one-process, 32-bit, no-accumulation Trainer holding `optimizers` (fields overridable:
    precision, precision_plugin, accumulate_grad_batches, world_size, model)."""
    fields = {
        "optimizers": optimizers,
        "precision": "32-true",
        "precision_plugin": SimpleNamespace(scaler=None),
        "accumulate_grad_batches": 1,
        "gradient_clip_val": None,
        "world_size": 1,
        "model": None,
        "fit_loop": SimpleNamespace(_skip_backward=False),
    }
    return SimpleNamespace(**{**fields, **overrides})
