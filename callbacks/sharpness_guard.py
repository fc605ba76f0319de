"""Lightning glue for closure-based optimizers (SAM family and any optimizer with
`requires_closure = True`): refuse settings that would train them silently wrong, give
`local_ascent` optimizers the DDP `no_sync` context, and keep the passes at perturbed weights
out of the module's logs and metrics."""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Iterator
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from torchmetrics import Metric
from typing_extensions import override

from optiforge.optimizers.sharpness_pass import SharpnessPass

METRIC_BOOKKEEPING = ("_update_count", "_computed", "_forward_cache")


def _metric_snapshot(metric: Metric) -> dict[str, Any]:
    """Copies of a metric's states and update bookkeeping (its update works in place)."""
    names = (*metric._defaults, *METRIC_BOOKKEEPING)
    values = (getattr(metric, name) for name in names)
    return {
        name: value.clone() if isinstance(value, torch.Tensor) else copy.copy(value)
        for name, value in zip(names, values, strict=True)
    }


def _skip_log(*args: Any, **kwargs: Any) -> None:
    """Stands in for `LightningModule.log` during an unreported pass."""


@contextlib.contextmanager
def unreported(pl_module: L.LightningModule, sharp: SharpnessPass) -> Iterator[SharpnessPass]:
    """Around one closure call: if the pass is not to be reported (`sharp.log` False: perturbed
    weights, RW-SAM's probe), `pl_module.log` / `log_dict` do nothing and every torchmetrics
    metric of the module gets its state back afterwards, as if the pass never ran."""
    if sharp.log:
        yield sharp
        return
    metrics = [module for module in pl_module.modules() if isinstance(module, Metric)]
    snapshots = [_metric_snapshot(metric) for metric in metrics]
    pl_module.log = _skip_log  # an instance attribute shadows the method; log_dict calls it
    try:
        yield sharp
    finally:
        del pl_module.log
        for metric, snapshot in zip(metrics, snapshots, strict=True):
            for name, value in snapshot.items():
                setattr(metric, name, value)


class SharpnessGuard(Callback):
    """Checks, at the start of fit, every optimizer that must run its closure several times.

    - `precision="16-mixed"` on GPU: Lightning's AMP with a GradScaler runs the closure once and
      steps without it (on CPU there is no scaler and the closure path is kept, so it is allowed).
    - `accumulate_grad_batches > 1`: Lightning runs closures without stepping, and the step's
      closure would see only the last batch.
    Both raise a `ValueError` naming the Trainer flag. Under DDP, an optimizer with
    `local_ascent=True` gets `ascent_context = ddp_model.no_sync`, so its ascent gradients stay
    per rank. An optimizer with a `pass_context` (the SAM family, NSGDHess) gets `unreported`:
    in any module, also one that ignores the sharpness-pass contract, what `training_step` logs with
    `self.log` and accumulates in torchmetrics comes from the passes at the current weights
    only (the value `training_step` returns, as seen by `on_train_batch_end`, is still the last
    pass's). The project's CLI adds this callback by default.
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
            if hasattr(optimizer, "pass_context"):
                optimizer.pass_context = functools.partial(unreported, pl_module)
            no_sync = getattr(trainer.model, "no_sync", None)
            if getattr(optimizer, "local_ascent", False) and no_sync is not None:
                optimizer.ascent_context = no_sync
