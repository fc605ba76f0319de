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

from optimizers.constraint_residual import ConstraintKind, ConstraintResidual
from optimizers.validation import require_choice, require_non_negative, require_positive

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
        self._residual_sum: dict[str, torch.Tensor] = {}
        self._residual_count = 0
        self.last_residuals: dict[str, torch.Tensor] = {}

    def lagrangian(
        self, loss: torch.Tensor, constraints: Mapping[str, ConstraintResidual]
    ) -> torch.Tensor:
        """`loss + sum_c <mu_c, r_c>` (+ the augmented term); records the residuals."""
        residuals = self._checked(constraints)
        if not self.multipliers:
            self._create(residuals, {name: c.kind for name, c in constraints.items()})
        self._follow_device(next(iter(residuals.values())).device)
        total = loss
        for name, value in residuals.items():
            total = total + (self.multipliers[name] * value).sum()
            if self.augmented_penalty > 0:
                violation = value if self.kinds[name] == "equality" else torch.relu(value)
                total = total + 0.5 * self.augmented_penalty * violation.square().sum()
        self._record({name: value.detach() for name, value in residuals.items()})
        return total

    def step(self) -> bool:
        """Count one primal step; run the dual step when one is due. True if it ran."""
        if not self.multipliers:
            raise RuntimeError("DualAscent.step called before any lagrangian(...) call")
        self.primal_steps += 1
        if self.primal_steps % self.update_every != 0:
            return False
        mean_residuals = self._mean_residuals()
        self._residual_sum = {}
        self._residual_count = 0
        if self.primal_steps <= self.warmup_steps:
            return False
        assert self.optimizer is not None
        for name, multiplier in self.multipliers.items():
            multiplier.grad = -mean_residuals[name]  # ascent on L: descend -r
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        with torch.no_grad():
            for name, multiplier in self.multipliers.items():
                if self.kinds[name] == "inequality":
                    multiplier.clamp_(min=0.0)
        self.dual_steps += 1
        return True

    def _checked(self, constraints: Mapping[str, ConstraintResidual]) -> dict[str, torch.Tensor]:
        """Residuals by name after shape, kind, finiteness and differentiability checks."""
        if not constraints:
            raise ValueError("constraints: at least one named constraint residual is needed")
        if self.multipliers and set(constraints) != set(self.multipliers):
            raise ValueError(
                f"constraints: names changed from {sorted(self.multipliers)} to "
                f"{sorted(constraints)}; the set of constraints is fixed after the first batch"
            )
        residuals: dict[str, torch.Tensor] = {}
        for name, constraint in constraints.items():
            if not isinstance(constraint, ConstraintResidual):
                raise TypeError(
                    f"constraint {name!r}: expected optimizers.equality(...) or "
                    f"optimizers.inequality(...), got {type(constraint).__name__}"
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
            if not bool(torch.isfinite(value.detach()).all()):
                raise ValueError(f"constraint {name!r}: residual is not finite: {value.detach()}")
            if torch.is_grad_enabled() and not value.requires_grad:
                raise ValueError(
                    f"constraint {name!r}: residual does not depend on any parameter that "
                    "requires grad, so the primal step cannot reduce it"
                )
            residuals[name] = value
        return residuals

    def _create(self, residuals: dict[str, torch.Tensor], kinds: dict[str, ConstraintKind]) -> None:
        for name in sorted(residuals):
            value = residuals[name]
            self.multipliers[name] = torch.zeros_like(value, requires_grad=False).detach()
            self.kinds[name] = kinds[name]
        self._build_optimizer()

    def _follow_device(self, device: torch.device) -> None:
        """Move multipliers and dual state to the residuals' device (e.g. after a CPU resume)."""
        if next(iter(self.multipliers.values())).device == device:
            return
        for multiplier in self.multipliers.values():
            multiplier.data = multiplier.data.to(device)
        assert self.optimizer is not None
        for state in self.optimizer.state.values():
            for key, value in state.items():
                if isinstance(value, torch.Tensor) and key != "step":
                    state[key] = value.to(device)
        self._residual_sum = {name: r.to(device) for name, r in self._residual_sum.items()}

    def _build_optimizer(self) -> None:
        optimizer_class = DUAL_OPTIMIZERS[self.dual_optimizer_name]
        self.optimizer = optimizer_class(
            list(self.multipliers.values()), lr=self.dual_lr, **self.dual_optimizer_kwargs
        )

    def _record(self, residuals: dict[str, torch.Tensor]) -> None:
        for name, value in residuals.items():
            previous = self._residual_sum.get(name)
            self._residual_sum[name] = value.clone() if previous is None else previous + value
        self._residual_count += 1
        self.last_residuals = residuals

    def _mean_residuals(self) -> dict[str, torch.Tensor]:
        if self._residual_count == 0:
            raise RuntimeError("DualAscent.step: no residuals recorded since the last dual step")
        names = sorted(self._residual_sum)
        flat = torch.cat([self._residual_sum[name] for name in names]) / self._residual_count
        if self.sync_residuals and dist.is_available() and dist.is_initialized():
            dist.all_reduce(flat, op=dist.ReduceOp.SUM)
            flat /= dist.get_world_size()
        sizes = [self._residual_sum[name].numel() for name in names]
        return dict(zip(names, flat.split(sizes), strict=True))

    def state_dict(self) -> dict[str, Any]:
        """Multipliers, dual optimizer state, counters and the pending residual window."""
        return {
            "multipliers": {name: m.clone() for name, m in self.multipliers.items()},
            "kinds": dict(self.kinds),
            "dual_optimizer": None if self.optimizer is None else self.optimizer.state_dict(),
            "primal_steps": self.primal_steps,
            "dual_steps": self.dual_steps,
            "residual_sum": {name: r.clone() for name, r in self._residual_sum.items()},
            "residual_count": self._residual_count,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what `state_dict` saved; the run continues exactly where it stopped."""
        self.multipliers = {name: m.clone() for name, m in sorted(state["multipliers"].items())}
        self.kinds = dict(state["kinds"])
        self.optimizer = None
        if self.multipliers:
            self._build_optimizer()
            assert self.optimizer is not None
            self.optimizer.load_state_dict(state["dual_optimizer"])
        self.primal_steps = int(state["primal_steps"])
        self.dual_steps = int(state["dual_steps"])
        self._residual_sum = {name: r.clone() for name, r in state["residual_sum"].items()}
        self._residual_count = int(state["residual_count"])
