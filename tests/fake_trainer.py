"""A stand-in for `lightning.Trainer` with only what `OptimizerAdapter.on_fit_start` reads."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def fake_trainer(optimizers: list[Any], **overrides: Any) -> SimpleNamespace:
    """A one-process, 32-bit, no-accumulation Trainer holding `optimizers` (fields overridable:
    precision, precision_plugin, accumulate_grad_batches, world_size, model)."""
    fields = {
        "optimizers": optimizers,
        "precision": "32-true",
        "precision_plugin": SimpleNamespace(scaler=None),
        "accumulate_grad_batches": 1,
        "world_size": 1,
        "model": None,
        "fit_loop": SimpleNamespace(_skip_backward=False),
    }
    return SimpleNamespace(**{**fields, **overrides})
