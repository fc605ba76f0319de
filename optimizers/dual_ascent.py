"""Primal-dual training for equality- and inequality-constrained learning (Barthakur & Chamon).

The learning problem `min f(theta) s.t. h(theta) = 0, g(theta) <= 0` is solved through its
empirical Lagrangian `L(theta, mu) = f + <mu_h, h> + <mu_g, g>`: the primal optimizer descends
`L` in `theta` with the user's own optimizer, and `DualAscent.step` ascends it in the
multipliers. Equality multipliers are left unprojected (they may take either sign), inequality
multipliers are projected onto `mu >= 0` after every dual step.

Plain torch loop::

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

from optiforge.optimizers.constraint_residual import ConstraintKind, ConstraintResidual
from optiforge.optimizers.validation import require_choice, require_non_negative, require_positive

DualOptimizerName = Literal["sgd", "adam"]
DUAL_OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
}


class DualAscent:
    """Owns the Lagrange multipliers of named constraints, forms the Lagrangian, runs dual steps.

    Multipliers are created on the first `lagrangian` call with the residuals' shapes, dtypes and
    device, and start at zero. The set of constraints, their kinds and shapes are then fixed: a
    later batch that changes them is an error naming the constraint.

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
        self.multipliers: dict[str, torch.Tensor] = {}
        self.kinds: dict[str, ConstraintKind] = {}
        self.optimizer: torch.optim.Optimizer | None = None
        self.primal_steps = 0
        self.dual_steps = 0
        self.last_residuals: dict[str, torch.Tensor] = {}
        # All multipliers live in one flat tensor (`multipliers` holds views of it), so a dual
        # step is one optimizer update and one projection whatever the number of constraints.
        self._flat = torch.zeros(0)
        self._lower = torch.zeros(0)
        self._sizes: list[int] = []
        self._residual_sum: torch.Tensor | None = None
        self._residual_count = 0

    def lagrangian(
        self, loss: torch.Tensor, constraints: Mapping[str, ConstraintResidual]
    ) -> torch.Tensor:
        """`loss + sum_c <mu_c, r_c>` (+ the augmented term); records the residuals."""
        residuals = self._checked(constraints)
        if not self.multipliers:
            self._create(residuals, {name: c.kind for name, c in constraints.items()})
        flat = torch.cat([residuals[name] for name in self.multipliers])
        self._require_finite(flat.detach())
        self._follow_device(flat.device)
        total = loss + (self._flat * flat).sum()
        if self.augmented_penalty > 0:
            violation = torch.maximum(flat, self._lower)  # relu for inequalities only
            total = total + 0.5 * self.augmented_penalty * violation.square().sum()
        self._record(flat.detach())
        return total

    def step(self) -> bool:
        """Count one primal step; run the dual step when one is due. True if it ran."""
        if not self.multipliers:
            raise RuntimeError("DualAscent.step called before any lagrangian(...) call")
        self.primal_steps += 1
        if self.primal_steps % self.update_every != 0:
            return False
        mean_residual = self._mean_residual()
        self._residual_sum = None
        self._residual_count = 0
        if self.primal_steps <= self.warmup_steps:
            return False
        assert self.optimizer is not None
        self._flat.grad = -mean_residual  # ascent on L: descend -r
        self.optimizer.step()
        self._flat.grad = None
        with torch.no_grad():
            self._flat.clamp_(min=self._lower)  # inequality multipliers onto >= 0
        self.dual_steps += 1
        return True

    def _checked(self, constraints: Mapping[str, ConstraintResidual]) -> dict[str, torch.Tensor]:
        """Residuals by name (flattened) after name, kind, shape and differentiability checks."""
        if not constraints:
            raise ValueError("constraints: at least one named constraint residual is needed")
        if self.multipliers and constraints.keys() != self.multipliers.keys():
            raise ValueError(
                f"constraints: names changed from {sorted(self.multipliers)} to "
                f"{sorted(constraints)}; the set of constraints is fixed after the first batch"
            )
        residuals: dict[str, torch.Tensor] = {}
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
            if self.multipliers:
                if constraint.kind != self.kinds[name]:
                    raise ValueError(
                        f"constraint {name!r}: kind changed from {self.kinds[name]!r} "
                        f"to {constraint.kind!r}"
                    )
                if value.shape != self.multipliers[name].shape:
                    raise ValueError(
                        f"constraint {name!r}: residual has {value.numel()} entries, its "
                        f"multiplier has {self.multipliers[name].numel()}"
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
        for name, value in zip(self.multipliers, flat.split(self._sizes), strict=True):
            if not bool(torch.isfinite(value).all()):
                raise ValueError(f"constraint {name!r}: residual is not finite: {value}")

    def _create(self, residuals: dict[str, torch.Tensor], kinds: dict[str, ConstraintKind]) -> None:
        names = sorted(residuals)
        values = [residuals[name] for name in names]
        self._install(
            torch.zeros(
                sum(v.numel() for v in values), dtype=values[0].dtype, device=values[0].device
            ),
            names,
            [v.numel() for v in values],
            {name: kinds[name] for name in names},
        )

    def _install(
        self,
        flat: torch.Tensor,
        names: list[str],
        sizes: list[int],
        kinds: dict[str, ConstraintKind],
    ) -> None:
        """Adopt `flat` as the multiplier storage: views by name, projection bounds, optimizer."""
        self._flat = flat.detach().clone()
        self._sizes = sizes
        self.kinds = dict(kinds)
        self.multipliers = dict(zip(names, self._flat.split(sizes), strict=True))
        lower = [
            torch.full((size,), 0.0 if kinds[name] == "inequality" else -torch.inf)
            for name, size in zip(names, sizes, strict=True)
        ]
        self._lower = torch.cat(lower).to(self._flat)
        optimizer_class = DUAL_OPTIMIZERS[self.dual_optimizer_name]
        self.optimizer = optimizer_class(
            [self._flat], lr=self.dual_lr, **self.dual_optimizer_kwargs
        )

    def _follow_device(self, device: torch.device) -> None:
        """Move multipliers and dual state to the residuals' device (e.g. after a CPU resume)."""
        if self._flat.device == device:
            return
        assert self.optimizer is not None
        state = self.optimizer.state_dict()
        self._install(self._flat.to(device), list(self.multipliers), self._sizes, self.kinds)
        self.optimizer.load_state_dict(state)  # torch casts the state to the parameter's device
        if self._residual_sum is not None:
            self._residual_sum = self._residual_sum.to(device)

    def _record(self, flat: torch.Tensor) -> None:
        if self._residual_sum is None:
            self._residual_sum = flat.clone()
        else:
            self._residual_sum += flat
        self._residual_count += 1
        self.last_residuals = dict(zip(self.multipliers, flat.split(self._sizes), strict=True))

    def _mean_residual(self) -> torch.Tensor:
        if self._residual_sum is None:
            raise RuntimeError("DualAscent.step: no residuals recorded since the last dual step")
        mean = self._residual_sum / self._residual_count
        if self.sync_residuals and dist.is_available() and dist.is_initialized():
            dist.all_reduce(mean, op=dist.ReduceOp.SUM)
            mean /= dist.get_world_size()
        return mean

    def state_dict(self) -> dict[str, Any]:
        """Multipliers, dual optimizer state, counters and the pending residual window."""
        return {
            "multipliers": {name: m.clone() for name, m in self.multipliers.items()},
            "kinds": dict(self.kinds),
            "dual_optimizer": None if self.optimizer is None else self.optimizer.state_dict(),
            "primal_steps": self.primal_steps,
            "dual_steps": self.dual_steps,
            "residual_sum": None if self._residual_sum is None else self._residual_sum.clone(),
            "residual_count": self._residual_count,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what `state_dict` saved; the run continues exactly where it stopped."""
        multipliers = state["multipliers"]
        if multipliers:
            names = sorted(multipliers)
            self._install(
                torch.cat([multipliers[name].reshape(-1) for name in names]),
                names,
                [multipliers[name].numel() for name in names],
                {name: state["kinds"][name] for name in names},
            )
            assert self.optimizer is not None
            self.optimizer.load_state_dict(state["dual_optimizer"])
        self.primal_steps = int(state["primal_steps"])
        self.dual_steps = int(state["dual_steps"])
        residual_sum = state["residual_sum"]
        self._residual_sum = None if residual_sum is None else residual_sum.clone()
        self._residual_count = int(state["residual_count"])
