"""Forward-only training under Lightning's automatic optimization (zeroth-order optimizers).

Lightning's training closure runs `training_step`, then `backward`, under `torch.enable_grad()`.
For an optimizer with `forward_only = True` (`optiforge.optimizers.TelescopingZO`,
`optiforge.optimizers.MeZO`) this callback, for the length of `fit`, switches that backward off
(`fit_loop._skip_backward`, the switch Lightning's own StochasticWeightAveraging uses) and sets
`requires_grad=False` on the module's parameters, so `training_step` builds no autograd graph at all
(memory of inference). The module needs nothing: its `training_step` returns the loss as usual and
the optimizer calls the closure as many times as its estimator needs. Logging, checkpointing and
resume are Lightning's; the optimizer's step counter (the seed of its directions) is in its state
dict.
"""

from __future__ import annotations

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from typing_extensions import override


def is_forward_only(optimizer: object) -> bool:
    """True for an optimizer (or Lightning's wrapper of one) that never needs gradients."""
    inner = getattr(optimizer, "_optimizer", optimizer)
    return bool(getattr(inner, "forward_only", False))


class ForwardOnly(Callback):
    """Runs fit without backward passes when the optimizers are forward-only (else does nothing).

    Mixing forward-only and gradient optimizers in one module raises a `ValueError` naming
    `optimizer`. The project's CLI adds this callback by default; in your own Trainer pass
    `callbacks=[ForwardOnly(), SharpnessGuard()]` (the second keeps perturbed passes out of logs).
    """

    def __init__(self) -> None:
        self._frozen: list[torch.nn.Parameter] = []
        self._active = False

    @override
    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        flags = [is_forward_only(optimizer) for optimizer in trainer.optimizers]
        if not any(flags):
            return
        if not all(flags):
            raise ValueError(
                "optimizer: forward-only (zeroth-order) optimizers cannot be combined with "
                "gradient-based ones in one module; use only TelescopingZO / MeZO or none"
            )
        if pl_module.automatic_optimization:
            trainer.fit_loop._skip_backward = True
        self._frozen = [p for p in pl_module.parameters() if p.requires_grad]
        for p in self._frozen:
            p.requires_grad_(False)
        self._active = True

    def _release(self, trainer: L.Trainer) -> None:
        if not self._active:
            return
        for p in self._frozen:
            p.requires_grad_(True)
        self._frozen = []
        trainer.fit_loop._skip_backward = False
        self._active = False

    @override
    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._release(trainer)

    @override
    def on_exception(
        self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException
    ) -> None:
        self._release(trainer)
