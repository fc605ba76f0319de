"""Lightning glue for closure-based optimizers (SAM family and any optimizer with
`requires_closure = True`): refuse settings that would train them silently wrong, and give
`local_ascent` optimizers the DDP `no_sync` context."""

from __future__ import annotations

import lightning as L
from lightning.pytorch.callbacks import Callback
from typing_extensions import override


class SharpnessGuard(Callback):
    """Checks, at the start of fit, every optimizer that must run its closure several times.

    - `precision="16-mixed"` on GPU: Lightning's AMP with a GradScaler runs the closure once and
      steps without it (on CPU there is no scaler and the closure path is kept, so it is allowed).
    - `accumulate_grad_batches > 1`: Lightning runs closures without stepping, and the step's
      closure would see only the last batch.
    Both raise a `ValueError` naming the Trainer flag. Under DDP, an optimizer with
    `local_ascent=True` gets `ascent_context = ddp_model.no_sync`, so its ascent gradients stay
    per rank. The project's CLI adds this callback by default.
    """

    @override
    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        for optimizer in trainer.optimizers:
            if not getattr(optimizer, "requires_closure", False):
                continue
            name = type(optimizer).__name__
            if getattr(trainer.precision_plugin, "scaler", None) is not None:
                raise ValueError(
                    f"trainer.precision={trainer.precision!r} cannot drive {name}: fp16 AMP with a "
                    "gradient scaler calls the closure once and steps without it; use precision "
                    "32-true or bf16-mixed"
                )
            if trainer.accumulate_grad_batches != 1:
                raise ValueError(
                    "trainer.accumulate_grad_batches="
                    f"{trainer.accumulate_grad_batches} cannot drive {name}: its closure would "
                    "see only the last batch; use 1 and a larger batch"
                )
            no_sync = getattr(trainer.model, "no_sync", None)
            if getattr(optimizer, "local_ascent", False) and no_sync is not None:
                optimizer.ascent_context = no_sync
