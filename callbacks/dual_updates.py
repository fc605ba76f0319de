"""Lightning callback for equality-constrained learning: multipliers, Lagrangian, dual steps.

The contract: a LightningModule's `training_step` is decorated with `lagrangian_step` and returns
a dict holding its loss and its named constraint residuals::

    from optiforge.callbacks import lagrangian_step
    from optiforge.optimizers import equality, inequality

    @lagrangian_step
    def training_step(self, batch, batch_idx):
        loss, parity_gap, norm = ...
        return {"loss": loss, "constraints": {"parity": equality(parity_gap),
                                              "norm": inequality(norm - 1.0)}}

With `DualUpdates` in the trainer's callbacks, the decorator replaces the returned "loss" by the
Lagrangian before Lightning's backward (so precision plugins, gradient clipping, accumulation and
DDP all see the Lagrangian) and keeps the objective under "objective"; after every optimizer step
the multipliers ascend (`optiforge.optimizers.DualAscent`). Without the callback the decorator
returns the step's output unchanged (a plain tensor, e.g. a penalty mode), and refuses returned
constraints. Multipliers live in the checkpoint; residuals and multipliers are logged under
`constraints/<name>/...`. A module whose `training_step` is not decorated is refused at fit start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import lightning as L
import torch

from optiforge.optimizers.dual_ascent import DualAscent, DualOptimizerName

LOGGED_ELEMENTS_MAX = 16
LAGRANGIAN_STEP_MARK = "_dual_updates_lagrangian_step"
StepFunction = TypeVar("StepFunction", bound=Callable[..., Any])


class DualUpdates(L.Callback):
    """Turns the returned loss into the Lagrangian and runs the dual ascent (see module doc).

    The arguments `dual_optimizer`, `dual_lr`, `dual_optimizer_kwargs`, `update_every`,
    `warmup_steps` and `augmented_penalty` are those of `optiforge.optimizers.DualAscent`;
    `update_every` and `warmup_steps` count optimizer steps.

    Residuals and multipliers are logged at the trainer's `log_every_n_steps`: vectors of up to
    16 entries entry by entry, longer ones as max |r|, mean |r|, max |mu| and mean mu.
    """

    def __init__(
        self,
        dual_optimizer: DualOptimizerName = "sgd",
        dual_lr: float = 1e-3,
        dual_optimizer_kwargs: dict[str, Any] | None = None,
        update_every: int = 1,
        warmup_steps: int = 0,
        augmented_penalty: float = 0.0,
    ) -> None:
        self.duals = DualAscent(
            dual_optimizer=dual_optimizer,
            dual_lr=dual_lr,
            dual_optimizer_kwargs=dual_optimizer_kwargs,
            update_every=update_every,
            warmup_steps=warmup_steps,
            augmented_penalty=augmented_penalty,
        )
        self._seen_global_step = 0

    @property
    def state_key(self) -> str:
        return "DualUpdates"

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """Refuse, before any step, a module that does not follow the contract (module doc)."""
        if stage == "fit":
            self.check_module(pl_module)

    @staticmethod
    def check_module(pl_module: L.LightningModule) -> None:
        """Raise a one-line ValueError naming what `pl_module` lacks to follow the contract
        (module doc); `train.py fit` calls it before anything is written."""
        if not pl_module.automatic_optimization:
            raise ValueError(
                "DualUpdates needs automatic optimization (model.automatic_optimization=True); "
                "with manual optimization call optiforge.optimizers.DualAscent yourself"
            )
        if not getattr(type(pl_module).training_step, LAGRANGIAN_STEP_MARK, False):
            raise ValueError(
                f"DualUpdates: {type(pl_module).__name__}.training_step must be decorated with "
                "@optiforge.callbacks.lagrangian_step and return a dict with 'loss' and "
                "'constraints'"
            )

    def to_lagrangian(self, output: Any) -> dict[str, Any]:
        """The step's {"loss", "constraints"} with "loss" made the Lagrangian, "objective" kept."""
        if not isinstance(output, Mapping) or "loss" not in output or "constraints" not in output:
            raise ValueError(
                "DualUpdates: training_step must return a dict with 'loss' and 'constraints' "
                "(a dict of optiforge.optimizers.equality(...) / "
                f"optiforge.optimizers.inequality(...)), got {type(output).__name__}"
                + (f" with keys {sorted(output)}" if isinstance(output, Mapping) else "")
            )
        result = dict(output)
        result["objective"] = output["loss"].detach()
        result["loss"] = self.duals.lagrangian(output["loss"], output["constraints"])
        return result

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._seen_global_step = trainer.global_step

    def on_train_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        if trainer.global_step == self._seen_global_step:
            return  # gradient accumulation: no optimizer step yet
        self._seen_global_step = trainer.global_step
        self.duals.step()
        if trainer.global_step % trainer.log_every_n_steps == 0:
            self._log(pl_module, outputs)

    def _log(self, pl_module: L.LightningModule, outputs: Any) -> None:
        metrics: dict[str, torch.Tensor] = {}
        if isinstance(outputs, Mapping) and "objective" in outputs:
            metrics["constraints/objective"] = outputs["objective"]
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
        pl_module.log_dict(metrics, on_step=True, on_epoch=False)

    def state_dict(self) -> dict[str, Any]:
        return {"duals": self.duals.state_dict()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.duals.load_state_dict(state_dict["duals"])


def require_dual_updates(trainer: L.Trainer, module_name: str) -> None:
    """Fail fast when a module returns constraints but nothing would enforce them."""
    if not any(isinstance(callback, DualUpdates) for callback in trainer.callbacks):
        raise ValueError(
            f"{module_name}: constraint_mode='lagrangian' needs the "
            "optiforge.callbacks.DualUpdates callback (add it under trainer.callbacks); without "
            "it the constraints are ignored"
        )


def lagrangian_step(training_step: StepFunction) -> StepFunction:
    """Decorate a `training_step` so that `DualUpdates`, when configured, gets its constraints.

    The wrapped step's output goes to the trainer's `DualUpdates.to_lagrangian`; without that
    callback (or without a trainer, called by hand) it is returned unchanged, unless a trainer
    would ignore the constraints it carries.
    """

    @functools.wraps(training_step)
    def step(module: L.LightningModule, *args: Any, **kwargs: Any) -> Any:
        output = training_step(module, *args, **kwargs)
        if module._trainer is None:  # called by hand, outside fit: the raw output
            return output
        for callback in module.trainer.callbacks:  # Lightning allows one DualUpdates at most
            if isinstance(callback, DualUpdates):
                return callback.to_lagrangian(output)
        if isinstance(output, Mapping) and "constraints" in output:
            raise ValueError(
                f"{type(module).__name__}.training_step returned constraints but no "
                "optiforge.callbacks.DualUpdates is in trainer.callbacks to enforce them"
            )
        return output

    setattr(step, LAGRANGIAN_STEP_MARK, True)
    return step  # type: ignore[return-value]
