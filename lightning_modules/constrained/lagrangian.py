"""Constrained learning inside a LightningModule: the module owns its multipliers (Barthakur &
Chamon's primal-dual method, paired with the primal optimizer the way Cooper pairs a problem
with a primal-dual optimizer).

Put `LagrangianMixin` before `L.LightningModule` in the bases, pass a
`optiforge.optimizers.DualAscent` (or nothing, for its defaults) to `super().__init__`, and
return `self.lagrangian(loss, constraints)` from `training_step`::

    class MyModule(LagrangianMixin, L.LightningModule):
        def __init__(self, duals: DualAscent | None = None) -> None:
            super().__init__(duals=duals)
            self.net = ...

        def training_step(self, batch, batch_idx):
            loss, parity_gap = ...
            return self.lagrangian(loss, {"parity": equality(parity_gap)})

The multipliers are the buffer `duals.flat` of the module (with the dual optimizer state as
its extra state), so checkpoints, `load_from_checkpoint` and `.to(device)` carry them. After
every optimizer step (the `optimizer_step` hook) the multipliers ascend on the residuals
recorded since the previous one; with manual optimization call `self.dual_step()` after your
optimizer step. A step that returns a plain loss (e.g. a penalty mode) takes no dual step.
Residuals and multipliers are logged under `constraints/<name>/...` at the trainer's
`log_every_n_steps`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch.optim import Optimizer

from optiforge.optimizers.constraint_residual import ConstraintResidual
from optiforge.optimizers.dual_ascent import DualAscent

LOGGED_ELEMENTS_MAX = 16


class LagrangianMixin:
    """Multipliers as buffers, the Lagrangian from `training_step`, the dual step after each
    optimizer step (see the module doc). Overrides of `optimizer_step` must call
    `super().optimizer_step(...)`: a fit whose optimizer steps bypass it stops with an error.

    Args:
        duals: the dual ascent (dual optimizer, lr, update interval, warm-up, augmented term);
            None is `DualAscent()`.
    """

    duals: DualAscent

    def __init__(self, *args: Any, duals: DualAscent | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.duals = DualAscent() if duals is None else duals
        self._objective: torch.Tensor | None = None
        self._dual_clock: tuple[int, int] | None = None  # (trainer id, global step) of the duals
        self._log_due = False

    def lagrangian(
        self, loss: torch.Tensor, constraints: Mapping[str, ConstraintResidual]
    ) -> torch.Tensor:
        """`loss + sum_c <mu_c, r_c>` to return from `training_step`; records the residuals
        (`optiforge.optimizers.equality(...)` / `inequality(...)`, scalars or 1-D vectors)."""
        self._require_dual_steps()
        self._objective = loss.detach()
        return self.duals.lagrangian(loss, constraints)

    def optimizer_step(
        self,
        epoch: int,
        batch_idx: int,
        optimizer: Optimizer,
        optimizer_closure: Callable[[], Any] | None = None,
    ) -> None:
        """The primal step (Lightning's), then the dual step."""
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)  # type: ignore[misc]
        self.dual_step()

    def dual_step(self) -> bool:
        """Count one primal step and run the dual step when due (True if it ran); nothing when
        no residual was recorded since the last call."""
        if not self.duals.pending:
            return False
        stepped = self.duals.step()
        trainer = self._trainer  # type: ignore[attr-defined]
        if trainer is not None:
            self._dual_clock = (id(trainer), trainer.global_step)
            self._log_due = True
        return stepped

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """Log residuals and multipliers after a dual step, at `log_every_n_steps`."""
        super().on_train_batch_end(outputs, batch, batch_idx)  # type: ignore[misc]
        trainer = self.trainer  # type: ignore[attr-defined]
        if self._log_due and trainer.global_step % trainer.log_every_n_steps == 0:
            self._log_constraints()
        self._log_due = False

    def _require_dual_steps(self) -> None:
        """Refuse to go on when optimizer steps ran without the mixin's dual step (the global
        step may count the current step or not when the hook runs: one step of slack)."""
        trainer = self._trainer  # type: ignore[attr-defined]
        if trainer is None or not self.automatic_optimization:  # type: ignore[attr-defined]
            return
        clock = self._dual_clock
        if clock is None or clock[0] != id(trainer):
            self._dual_clock = (id(trainer), trainer.global_step)
        elif trainer.global_step > clock[1] + 1:
            raise RuntimeError(
                f"{type(self).__name__}: optimizer steps ran without dual steps; an override of "
                "optimizer_step must call super().optimizer_step(...) (LagrangianMixin)"
            )

    def _log_constraints(self) -> None:
        """Objective, residuals and multipliers; vectors of up to 16 entries entry by entry,
        longer ones as max |r|, mean |r|, max |mu| and mean mu."""
        metrics: dict[str, torch.Tensor] = {}
        if self._objective is not None:
            metrics["constraints/objective"] = self._objective
        for name, multiplier in self.duals.multipliers.items():
            residual = self.duals.last_residuals[name]
            if multiplier.numel() <= LOGGED_ELEMENTS_MAX:
                for index in range(multiplier.numel()):
                    suffix = "" if multiplier.numel() == 1 else f"_{index}"
                    metrics[f"constraints/{name}/residual{suffix}"] = residual[index]
                    metrics[f"constraints/{name}/multiplier{suffix}"] = multiplier[index]
            else:
                metrics[f"constraints/{name}/residual_abs_max"] = residual.abs().max()
                metrics[f"constraints/{name}/residual_abs_mean"] = residual.abs().mean()
                metrics[f"constraints/{name}/multiplier_abs_max"] = multiplier.abs().max()
                metrics[f"constraints/{name}/multiplier_mean"] = multiplier.mean()
        self.log_dict(metrics, on_step=True, on_epoch=False)  # type: ignore[attr-defined]
