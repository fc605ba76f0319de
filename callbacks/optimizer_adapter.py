"""The one Lightning callback that serves what the project's optimizers declare they need.

Each optimizer class carries a `LoopNeeds` declaration (`optiforge.optimizers.contract`). At the
start of fit this callback reads the declaration of every optimizer of the Trainer and:

- refuses, naming the Trainer flag and the optimizer, what its declaration says it cannot
  support: `accumulate_grad_batches > 1`, fp16 AMP with a gradient scaler, 16-bit precision,
  `gradient_clip_val`, DDP, or forward-only mixed with gradient optimizers;
- binds the loop hooks of optimizers with extra closure passes (`bind_loop(LoopHooks(...))`):
  during passes that are not to be reported (perturbed weights, probes) `self.log` /
  `self.log_dict` do nothing and every torchmetrics metric of the module gets its state back,
  so any LightningModule logs the loss at the weights before the step; under DDP a
  `local_ascent` ascent runs under the DDP model's `no_sync`;
- runs forward-only optimizers (`TelescopingZO`, `MeZO`) without backward passes and with the
  module's parameters frozen, so `training_step` builds no autograd graph.

At the end of fit (or on an exception) everything is undone. `train.py` adds it; in your own
Trainer pass `callbacks=[OptimizerAdapter()]`. An optimizer that needs it and runs under
Lightning without it warns once, naming it.

Example:
    >>> from optiforge.callbacks import OptimizerAdapter
    >>> adapter = OptimizerAdapter()
"""

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

from optiforge.optimizers.contract import LoopHooks, LoopNeeds, loop_needs
from optiforge.optimizers.sharpness_pass import SharpnessPass

# Private torchmetrics bookkeeping restored after an unreported pass (listed in docs/optimizers.md;
# tests/callbacks/test_optimizer_adapter.py fails if torchmetrics renames them).
METRIC_BOOKKEEPING = ("_update_count", "_computed", "_forward_cache")


def _metric_snapshot(metric: Metric) -> dict[str, Any]:
    """Copies of a metric's states (public `metric_state`) and update bookkeeping."""
    names = (*metric.metric_state, *METRIC_BOOKKEEPING)
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


def refusal(trainer: L.Trainer, name: str, needs: LoopNeeds) -> str | None:
    """The one-line reason `trainer`'s settings cannot drive optimizer `name` (None: they can)."""
    precision = str(trainer.precision)
    because = f"cannot drive {name}: {needs.reason}"
    if trainer.accumulate_grad_batches != 1 and not needs.accumulation:
        return f"trainer.accumulate_grad_batches={trainer.accumulate_grad_batches} {because}"
    if getattr(trainer.precision_plugin, "scaler", None) is not None and not needs.gradient_scaler:
        return (
            f"trainer.precision={precision!r} (fp16 AMP with a gradient scaler, which calls the "
            f"closure once and steps without it) {because}; use 32-true or bf16-mixed"
        )
    if precision.startswith(("16", "bf16")) and not needs.half_precision:
        return f"trainer.precision={precision!r} {because}; use 32-true"
    clip = trainer.gradient_clip_val
    if clip is not None and clip > 0 and not needs.gradient_clipping:
        return f"trainer.gradient_clip_val={clip} {because}"
    if trainer.world_size > 1 and needs.ddp == "unsupported":
        return f"trainer.strategy with world size {trainer.world_size} {because}"
    return None


class OptimizerAdapter(Callback):
    """Reads every optimizer's `LoopNeeds` at the start of fit and serves it (see the module)."""

    def __init__(self) -> None:
        self._bound: list[Any] = []
        self._frozen: list[torch.nn.Parameter] = []
        self._skipping_backward = False

    @override
    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        declared = [(optimizer, loop_needs(optimizer)) for optimizer in trainer.optimizers]
        for optimizer, needs in declared:
            reason = refusal(trainer, type(optimizer).__name__, needs)
            if reason is not None:
                raise ValueError(reason)
        forward_only = [needs.forward_only for _, needs in declared]
        if any(forward_only) and not all(forward_only):
            raise ValueError(
                "optimizer: forward-only (zeroth-order) optimizers cannot be combined with "
                "gradient-based ones in one module; use only TelescopingZO / MeZO or none"
            )
        no_sync = getattr(trainer.model, "no_sync", None) if trainer.world_size > 1 else None
        hooks = LoopHooks(
            pass_context=functools.partial(unreported, pl_module),
            no_sync=no_sync or contextlib.nullcontext,
        )
        for optimizer, needs in declared:
            if needs.extra_passes:
                optimizer.bind_loop(hooks)
                self._bound.append(optimizer)
        if declared and all(forward_only):
            self._start_forward_only(trainer, pl_module)

    def _start_forward_only(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """No backward (Lightning's `fit_loop._skip_backward`, the switch its own
        StochasticWeightAveraging uses) and no graph (parameters frozen) for the fit."""
        if pl_module.automatic_optimization:
            trainer.fit_loop._skip_backward = True
            self._skipping_backward = True
        self._frozen = [p for p in pl_module.parameters() if p.requires_grad]
        for p in self._frozen:
            p.requires_grad_(False)

    def _release(self, trainer: L.Trainer) -> None:
        for optimizer in self._bound:
            optimizer.bind_loop(None)
        self._bound = []
        for p in self._frozen:
            p.requires_grad_(True)
        self._frozen = []
        if self._skipping_backward:
            trainer.fit_loop._skip_backward = False
            self._skipping_backward = False

    @override
    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._release(trainer)

    @override
    def on_exception(
        self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException
    ) -> None:
        self._release(trainer)
