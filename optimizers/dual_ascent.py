"""Primal-dual training for equality- and inequality-constrained learning (Barthakur & Chamon).

The learning problem `min f(theta) s.t. h(theta) = 0, g(theta) <= 0` is solved through its
empirical Lagrangian `L(theta, mu) = f + <mu_h, h> + <mu_g, g>`: the primal optimizer descends
`L` in `theta` with the user's own optimizer, and `DualAscent.step` ascends it in the
multipliers. Equality multipliers are left unprojected (they may take either sign), inequality
multipliers are projected onto `mu >= 0` after every dual step.

`DualAscent` is a torch `nn.Module` without parameters: the multipliers are its buffer, so a
module that holds it (e.g. a LightningModule through
`optiforge.lightning_modules.constrained.LagrangianMixin`) moves them with `.to(device)` and
saves them in its `state_dict`, together with the dual optimizer state (the module's extra
state). Plain torch loop::

    duals = DualAscent(dual_lr=1e-3)
    for x, y in loader:
        loss, parity = model_loss(x, y)
        lagrangian = duals.lagrangian(loss, {"parity": equality(parity)})
        optimizer.zero_grad()
        lagrangian.backward()
        optimizer.step()
        duals.step()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import torch
import torch.distributed as dist
from torch import nn

from optiforge.optimizers.constraint_residual import ConstraintKind, ConstraintResidual
from optiforge.optimizers.validation import require_choice, require_non_negative, require_positive

DualOptimizerName = Literal["sgd", "adam"]
DUAL_OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
}


class DualAscent(nn.Module):
    """Owns the Lagrange multipliers of named constraints, forms the Lagrangian, runs dual steps.

    Multipliers are created on the first `lagrangian` call with the residuals' shapes, dtypes and
    device, and start at zero; all of them live in one flat buffer, `flat` (`multipliers` gives
    per-constraint views), so a dual step is one optimizer update and one projection whatever the
    number of constraints. The set of constraints, their kinds and shapes are then fixed: a later
    batch that changes them is an error naming the constraint. Loading a `state_dict` into a
    fresh instance creates the buffer with the saved size.

    The dual step uses the mean of the residuals recorded since the previous dual step (every
    `lagrangian` call records one; a closure optimizer that evaluates several times per step
    contributes each evaluation). Under `torch.distributed` the mean is averaged across ranks
    before the step, so every rank keeps identical multipliers (averaging per-rank means is
    exact for equal per-rank batch sizes and residuals that are batch means).

    Args:
        dual_optimizer: "sgd" (plain gradient ascent, the paper's default) or "adam".
        dual_lr: dual step size.
        dual_optimizer_kwargs: further keyword arguments for the dual optimizer (e.g. momentum).
        update_every: run a dual step every this many primal steps.
        warmup_steps: primal steps before the first dual step (multipliers stay at zero).
        augmented_penalty: c >= 0 adds the augmented-Lagrangian term
            `c/2 * (||h||^2 + ||relu(g)||^2)` to the primal objective; 0 is the plain Lagrangian.
        sync_residuals: average residuals across ranks when a process group is initialized.
    """

    flat: torch.Tensor
    lower: torch.Tensor

    def __init__(
        self,
        dual_optimizer: DualOptimizerName = "sgd",
        dual_lr: float = 1e-3,
        dual_optimizer_kwargs: dict[str, Any] | None = None,
        update_every: int = 1,
        warmup_steps: int = 0,
        augmented_penalty: float = 0.0,
        sync_residuals: bool = True,
    ) -> None:
        super().__init__()
        require_choice("dual_optimizer", dual_optimizer, DUAL_OPTIMIZERS)
        require_positive("dual_lr", dual_lr)
        require_positive("update_every", update_every)
        require_non_negative("warmup_steps", warmup_steps)
        require_non_negative("augmented_penalty", augmented_penalty)
        self.dual_optimizer_name = dual_optimizer
        self.dual_lr = dual_lr
        self.dual_optimizer_kwargs = dict(dual_optimizer_kwargs or {})
        self.update_every = update_every
        self.warmup_steps = warmup_steps
        self.augmented_penalty = augmented_penalty
        self.sync_residuals = sync_residuals
        self.register_buffer("flat", torch.zeros(0))
        # projection bounds: 0 for inequality entries, -inf for equality ones (derived state)
        self.register_buffer("lower", torch.zeros(0), persistent=False)
        self.names: list[str] = []
        self.sizes: list[int] = []
        self.kinds: dict[str, ConstraintKind] = {}
        self.optimizer: torch.optim.Optimizer | None = None
        self.primal_steps = 0
        self.dual_steps = 0
        self.last_residuals: dict[str, torch.Tensor] = {}
        self._residual_sum: torch.Tensor | None = None
        self._residual_count = 0
        self.register_load_state_dict_pre_hook(_size_from_state)

    @property
    def multipliers(self) -> dict[str, torch.Tensor]:
        """Per-constraint views of `flat`, by name (empty before the first `lagrangian`)."""
        return dict(zip(self.names, self.flat.split(self.sizes), strict=True))

    @property
    def pending(self) -> bool:
        """Whether residuals were recorded since the last `step` (a dual step can run)."""
        return self._residual_count > 0

    def lagrangian(
        self, loss: torch.Tensor, constraints: Mapping[str, ConstraintResidual]
    ) -> torch.Tensor:
        """`loss + sum_c <mu_c, r_c>` (+ the augmented term); records the residuals."""
        residuals = self._checked(constraints)
        if not self.names:
            self._create(residuals, {name: c.kind for name, c in constraints.items()})
        flat = torch.cat([residuals[name] for name in self.names])
        self._require_finite(flat.detach())
        if self.flat.device != flat.device:  # e.g. residuals on the GPU after a CPU resume
            self.to(flat.device)
        total = loss + (self.flat * flat).sum()
        if self.augmented_penalty > 0:
            violation = torch.maximum(flat, self.lower)  # relu for inequalities only
            total = total + 0.5 * self.augmented_penalty * violation.square().sum()
        self._record(flat.detach())
        return total

    def step(self) -> bool:
        """Count one primal step; run the dual step when one is due. True if it ran."""
        if not self.names:
            raise RuntimeError("DualAscent.step called before any lagrangian(...) call")
        self.primal_steps += 1
        if self.primal_steps % self.update_every != 0:
            return False
        mean_residual = self._mean_residual()
        self._residual_sum = None
        self._residual_count = 0
        if self.primal_steps <= self.warmup_steps:
            return False
        optimizer = self._bound_optimizer()
        self.flat.grad = -mean_residual  # ascent on L: descend -r
        optimizer.step()
        self.flat.grad = None
        with torch.no_grad():
            self.flat.clamp_(min=self.lower)  # inequality multipliers onto >= 0
        self.dual_steps += 1
        return True

    def _checked(self, constraints: Mapping[str, ConstraintResidual]) -> dict[str, torch.Tensor]:
        """Residuals by name (flattened) after name, kind, shape and differentiability checks."""
        if not constraints:
            raise ValueError("constraints: at least one named constraint residual is needed")
        if self.names and constraints.keys() != set(self.names):
            raise ValueError(
                f"constraints: names changed from {sorted(self.names)} to "
                f"{sorted(constraints)}; the set of constraints is fixed after the first batch"
            )
        residuals: dict[str, torch.Tensor] = {}
        sizes = dict(zip(self.names, self.sizes, strict=True))
        for name, constraint in constraints.items():
            if not isinstance(constraint, ConstraintResidual):
                raise TypeError(
                    f"constraint {name!r}: expected optiforge.optimizers.equality(...) or "
                    f"optiforge.optimizers.inequality(...), got {type(constraint).__name__}"
                )
            value = constraint.value
            if value.dim() > 1:
                raise ValueError(
                    f"constraint {name!r}: residual must be a scalar or a 1-D vector, "
                    f"got shape {tuple(value.shape)}"
                )
            value = value.reshape(-1)
            if self.names:
                if constraint.kind != self.kinds[name]:
                    raise ValueError(
                        f"constraint {name!r}: kind changed from {self.kinds[name]!r} "
                        f"to {constraint.kind!r}"
                    )
                if value.numel() != sizes[name]:
                    raise ValueError(
                        f"constraint {name!r}: residual has {value.numel()} entries, its "
                        f"multiplier has {sizes[name]}"
                    )
            if torch.is_grad_enabled() and not value.requires_grad:
                raise ValueError(
                    f"constraint {name!r}: residual does not depend on any parameter that "
                    "requires grad, so the primal step cannot reduce it"
                )
            residuals[name] = value
        return residuals

    def _require_finite(self, flat: torch.Tensor) -> None:
        """One check for all residuals; on failure, name the offending constraint."""
        if bool(torch.isfinite(flat).all()):
            return
        for name, value in zip(self.names, flat.split(self.sizes), strict=True):
            if not bool(torch.isfinite(value).all()):
                raise ValueError(f"constraint {name!r}: residual is not finite: {value}")

    def _create(self, residuals: dict[str, torch.Tensor], kinds: dict[str, ConstraintKind]) -> None:
        """Zero multipliers for the first batch's constraints, in sorted name order."""
        names = sorted(residuals)
        values = [residuals[name] for name in names]
        size = sum(v.numel() for v in values)
        self.flat = torch.zeros(size, dtype=values[0].dtype, device=values[0].device)
        self._describe(names, [v.numel() for v in values], {name: kinds[name] for name in names})

    def _describe(
        self, names: list[str], sizes: list[int], kinds: Mapping[str, ConstraintKind]
    ) -> None:
        """Set the constraints' names, sizes and kinds, and the projection bounds they imply."""
        self.names, self.sizes, self.kinds = list(names), list(sizes), dict(kinds)
        lower = [
            torch.full((size,), 0.0 if kinds[name] == "inequality" else -torch.inf)
            for name, size in zip(names, sizes, strict=True)
        ]
        self.lower = torch.cat(lower).to(self.flat) if lower else torch.zeros(0).to(self.flat)

    def _bound_optimizer(self) -> torch.optim.Optimizer:
        """The dual optimizer on the current `flat` buffer; `.to(...)` replaces the buffer, so a
        new optimizer takes over the old one's state (torch casts it to the buffer's device)."""
        current = self.optimizer
        if current is not None and current.param_groups[0]["params"][0] is self.flat:
            return current
        optimizer_class = DUAL_OPTIMIZERS[self.dual_optimizer_name]
        self.optimizer = optimizer_class([self.flat], lr=self.dual_lr, **self.dual_optimizer_kwargs)
        if current is not None:
            self.optimizer.load_state_dict(current.state_dict())
        return self.optimizer

    def _record(self, flat: torch.Tensor) -> None:
        if self._residual_sum is None:
            self._residual_sum = flat.clone()
        else:
            self._residual_sum += flat.to(self._residual_sum.device)
        self._residual_count += 1
        self.last_residuals = dict(zip(self.names, flat.split(self.sizes), strict=True))

    def _mean_residual(self) -> torch.Tensor:
        if self._residual_sum is None:
            raise RuntimeError("DualAscent.step: no residuals recorded since the last dual step")
        mean = (self._residual_sum / self._residual_count).to(self.flat)
        if self.sync_residuals and dist.is_available() and dist.is_initialized():
            dist.all_reduce(mean, op=dist.ReduceOp.SUM)
            mean /= dist.get_world_size()
        return mean

    def get_extra_state(self) -> dict[str, Any]:
        """What `state_dict` saves beside the `flat` buffer: the constraints' names, sizes and
        kinds, the dual optimizer state, counters and the pending residual window."""
        return {
            "names": list(self.names),
            "sizes": list(self.sizes),
            "kinds": dict(self.kinds),
            "dual_optimizer": None if self.optimizer is None else self.optimizer.state_dict(),
            "primal_steps": self.primal_steps,
            "dual_steps": self.dual_steps,
            "residual_sum": None if self._residual_sum is None else self._residual_sum.clone(),
            "residual_count": self._residual_count,
        }

    def set_extra_state(self, state: Any) -> None:
        """Restore what `get_extra_state` saved (the buffer is already loaded): the run
        continues exactly where it stopped."""
        self._describe(state["names"], state["sizes"], state["kinds"])
        self.optimizer = None
        if state["dual_optimizer"] is not None:
            self._bound_optimizer().load_state_dict(state["dual_optimizer"])
        self.primal_steps = int(state["primal_steps"])
        self.dual_steps = int(state["dual_steps"])
        residual_sum = state["residual_sum"]
        self._residual_sum = None if residual_sum is None else residual_sum.to(self.flat)
        self._residual_count = int(state["residual_count"])


def _size_from_state(
    module: nn.Module, state_dict: Mapping[str, Any], prefix: str, *_: Any
) -> None:
    """Load-state pre-hook: a fresh `DualAscent` (no multipliers yet) takes the saved size and
    dtype, so a checkpoint loads into a module that has not seen a batch; a module that has
    multipliers keeps torch's size check."""
    saved = state_dict.get(prefix + "flat")
    own = module.get_buffer("flat")
    if isinstance(saved, torch.Tensor) and own.numel() == 0 and saved.numel() > 0:
        module.flat = torch.empty(saved.shape, dtype=saved.dtype, device=own.device)
