"""Lightning callback for equality-constrained learning: multipliers, Lagrangian, dual steps.

The contract: a LightningModule's `training_step` returns a dict holding its loss and its named
constraint residuals::

    from optimizers import equality, inequality

    def training_step(self, batch, batch_idx):
        loss, parity_gap, norm = ...
        return {"loss": loss, "constraints": {"parity": equality(parity_gap),
                                              "norm": inequality(norm - 1.0)}}

With `DualUpdates` in the trainer's callbacks, the returned "loss" is replaced by the Lagrangian
before Lightning's backward (so precision plugins, gradient clipping, accumulation and DDP all see
the Lagrangian), the objective is kept under "objective", and after every optimizer step the
multipliers ascend (`optimizers.DualAscent`). Multipliers live in the checkpoint; residuals and
multipliers are logged under `constraints/<name>/...`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import lightning as L
import torch

from optimizers.dual_ascent import DualAscent, DualOptimizerName

LOGGED_ELEMENTS_MAX = 16


class DualUpdates(L.Callback):
    """Turns the returned loss into the Lagrangian and runs the dual ascent (see module doc).

    Args:
        dual_optimizer, dual_lr, dual_optimizer_kwargs, update_every, warmup_steps,
        augmented_penalty: those of `optimizers.DualAscent`; `update_every` and `warmup_steps`
            count optimizer steps.

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
        self._original_training_step: Callable[..., Any] | None = None
        self._seen_global_step = 0

    @property
    def state_key(self) -> str:
        return "DualUpdates"

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if stage != "fit":
            return
        if not pl_module.automatic_optimization:
            raise ValueError(
                "DualUpdates needs automatic optimization (model.automatic_optimization=True); "
                "with manual optimization call optimizers.DualAscent yourself"
            )
        if self._original_training_step is not None:
            return
        original = pl_module.training_step
        self._original_training_step = original

        @functools.wraps(original)
        def constrained_training_step(*args: Any, **kwargs: Any) -> dict[str, Any]:
            return self._to_lagrangian(original(*args, **kwargs))

        pl_module.training_step = constrained_training_step  # type: ignore[method-assign]

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if stage == "fit" and self._original_training_step is not None:
            del pl_module.training_step  # drop the instance attribute: the method shows again
            self._original_training_step = None

    def _to_lagrangian(self, output: Any) -> dict[str, Any]:
        if not isinstance(output, Mapping) or "loss" not in output or "constraints" not in output:
            raise ValueError(
                "DualUpdates: training_step must return a dict with 'loss' and 'constraints' "
                "(a dict of optimizers.equality(...) / optimizers.inequality(...)), got "
                f"{type(output).__name__}"
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
            f"{module_name}: constraint_mode='lagrangian' needs the callbacks.DualUpdates "
            "callback (add it under trainer.callbacks); without it the constraints are ignored"
        )
