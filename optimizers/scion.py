"""Scion and Clipped Scion: steepest descent in a per-layer norm, via linear minimization oracles.

Pethick, Xie, Erdogan, Antonakopoulos, Silveti-Falls, Cevher, "Generalized Gradient Norm Clipping
& Non-Euclidean (L0,L1)-Smoothness", NeurIPS 2025 (arXiv 2506.01913), and its base method Scion.
Every parameter tensor x_l has a norm (its LMO, `optiforge.optimizers.lmo`) and a radius `scale`
r_l; the network lives in the product norm ||x|| = max_l ||x_l||_l / r_l, whose dual norm is D =
sum_l r_l ||d_l||_{l,*} (a sum over *all* parameters of all groups).

Per tensor: momentum d_k = (1 - m) d_{k-1} + m g_k (d_0 = 0; m = `momentum`, 1 = none), then
u = r_l lmo_l(d_k), which points against d_k. With step size lr and clipping factor eta:

    UnconstrainedScion           x <- x + lr u
    Scion (Frank-Wolfe)          x <- (1 - lr) x + lr u
    UnconstrainedClippedScion    x <- x + lr eta u,               D = -sum <d, u>     (Alg. 3)
    ClippedScion                 x <- (1 - lr eta) x + lr eta u,  D = sum <d, x - u>  (Alg. 4)

with eta = min(1, D / rho). For the unconstrained variant D is the dual norm of the momentum, so
below rho the step is lr / rho * d^sharp (a steepest-descent step, gradient-sized) and from rho on
it is the full LMO step (the normalized one): GGNC (Alg. 1) with gamma = lr / rho. For the
constrained variant D is the Frank-Wolfe gap, and the step is the Frank-Wolfe short step
(Alg. 2, variant 2: eta = min(rho', <d, v> / (4 beta^2)) with v = x - u, where 4 beta^2 and rho'
are folded into rho). The (1 - lr eta) x term is the weight decay that keeps x in the ball of
radius `scale`; D >= 0 whenever x is inside it (Frank-Wolfe steps with lr <= 1 keep it there),
so a negative D, and hence eta < 0, only happens if the weights start outside the ball.

Distributed: under DDP every rank holds all parameters and the same averaged gradients, so every
rank computes the same D and no communication is needed (an all_reduce SUM would even multiply D
by the world size). Only when each rank steps a different subset of the parameters (e.g.
`torch.distributed.optim.ZeroRedundancyOptimizer`, FSDP-style sharding) is D a partial sum; pass
`sharded_params=True` and the partial sums are all-reduced, if a process group is initialized.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch
import torch.distributed as dist
from torch import Tensor
from torch.optim.optimizer import Optimizer, ParamsT

from optiforge.optimizers.contract import LoopNeeds
from optiforge.optimizers.lmo import LMO, make_lmo
from optiforge.optimizers.validation import require_in_range, require_non_negative, require_positive


class _ScionBase(Optimizer):
    """Shared momentum, LMO and update logic; subclasses fix `constrained` and `clipped`."""

    constrained: ClassVar[bool]
    clipped: ClassVar[bool]
    loop_needs = LoopNeeds()  # one gradient per step, closure optional; DDP: averaged gradients

    def __init__(
        self,
        params: ParamsT,
        lr: float,
        momentum: float,
        norm: str,
        norm_kwargs: dict[str, Any] | None,
        scale: float,
        rho: float | None = None,
        sharded_params: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "norm": norm,
            "norm_kwargs": dict(norm_kwargs or {}),
            "scale": scale,
        }
        self._validate(defaults, prefix="")
        if self.clipped:
            require_positive("rho", rho)
        self.rho = rho
        self.sharded_params = sharded_params
        super().__init__(params, defaults)

    def _validate(self, group: dict[str, Any], prefix: str) -> LMO:
        """Check the hyperparameters of `group` (fields named with `prefix`); return its LMO."""
        if self.constrained:  # a Frank-Wolfe weight must stay a convex combination
            require_in_range(f"{prefix}lr", group["lr"], 0.0, 1.0)
        else:
            require_non_negative(f"{prefix}lr", group["lr"])
        require_in_range(f"{prefix}momentum", group["momentum"], 0.0, 1.0, low_open=True)
        require_positive(f"{prefix}scale", group["scale"])
        if not isinstance(group["norm_kwargs"], dict):
            raise ValueError(f"{prefix}norm_kwargs must be a dict, got {group['norm_kwargs']!r}")
        try:
            return make_lmo(group["norm"], **group["norm_kwargs"])
        except ValueError as error:
            raise ValueError(f"{prefix}{error}") from None

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (it may set lr, momentum, norm, norm_kwargs, scale) and check it."""
        super().add_param_group(param_group)
        index = len(self.param_groups) - 1
        group = self.param_groups[index]
        try:
            lmo = self._validate(group, prefix=f"param_groups[{index}].")
            for position, param in enumerate(group["params"]):
                lmo.check_shape(param.shape, f"param_groups[{index}].params[{position}]")
        except ValueError:
            self.param_groups.pop()
            raise

    def _directions(self, group: dict[str, Any]) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
        """Update the momentum of the group's parameters that have a gradient and return
        (params, momenta d, directions u = scale * lmo(d))."""
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return [], [], []
        for p in params:
            if "momentum_buffer" not in self.state[p]:
                self.state[p]["momentum_buffer"] = torch.zeros_like(p)
        buffers = [self.state[p]["momentum_buffer"] for p in params]
        torch._foreach_lerp_(buffers, [p.grad for p in params], group["momentum"])
        lmo = make_lmo(group["norm"], **group["norm_kwargs"])
        directions = [lmo(d) for d in buffers]
        torch._foreach_mul_(directions, group["scale"])
        return params, buffers, directions

    def _clip_factor(self, groups: list[tuple[list[Tensor], list[Tensor], list[Tensor]]]) -> float:
        """eta = min(1, D / rho) with D summed over all groups (and shards, see module doc)."""
        terms = []
        for params, buffers, directions in groups:
            for x, d, u in zip(params, buffers, directions, strict=True):
                v = x - u if self.constrained else -u  # D = <d, v>
                terms.append(torch.sum(d * v, dtype=torch.float32))
        dual = torch.stack(terms).sum() if terms else torch.zeros(())
        if self.sharded_params and dist.is_available() and dist.is_initialized():
            dist.all_reduce(dual)
        return min(1.0, dual.item() / self.rho)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """One update; `closure` (re-evaluating the loss with gradients) runs first, as in LBFGS."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        groups = [self._directions(group) for group in self.param_groups]
        eta = self._clip_factor(groups) if self.clipped else 1.0
        for group, (params, _, directions) in zip(self.param_groups, groups, strict=True):
            if not params:
                continue
            weight = group["lr"] * eta
            if self.constrained:
                torch._foreach_lerp_(params, directions, weight)  # (1 - w) x + w u
            else:
                torch._foreach_add_(params, directions, alpha=weight)
        return loss


class Scion(_ScionBase):
    """Constrained Scion: Frank-Wolfe step x <- (1 - lr) x + lr * scale * lmo(d).

    Args:
        params: tensors or param groups; a group may set `lr`, `momentum`, `norm`,
            `norm_kwargs` and `scale` (see `optiforge.optimizers.scion_param_groups`).
        lr: Frank-Wolfe step size, in [0, 1].
        momentum: weight m of the new gradient in d = (1 - m) d + m g, in (0, 1]; 1 = none.
        norm: LMO name (`optiforge.optimizers.lmo.LMOS`, any case); "auto" picks by tensor rank.
        norm_kwargs: keyword arguments of the LMO, e.g. {"steps": 5} for Spectral.
        scale: radius of the norm ball the weights live in (> 0).
    """

    constrained = True
    clipped = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.05,
        momentum: float = 0.1,
        norm: str = "auto",
        norm_kwargs: dict[str, Any] | None = None,
        scale: float = 1.0,
    ) -> None:
        super().__init__(params, lr, momentum, norm, norm_kwargs, scale)


class UnconstrainedScion(_ScionBase):
    """Unconstrained Scion: x <- x + lr * scale * lmo(d) (no weight decay).

    Args: as `Scion`, except `lr` only has to be >= 0.
    """

    constrained = False
    clipped = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.05,
        momentum: float = 0.1,
        norm: str = "auto",
        norm_kwargs: dict[str, Any] | None = None,
        scale: float = 1.0,
    ) -> None:
        super().__init__(params, lr, momentum, norm, norm_kwargs, scale)


class ClippedScion(_ScionBase):
    """Clipped Scion (Alg. 4): x <- (1 - lr eta) x + lr eta u, eta = min(1, D / rho),
    D = sum <d, x - u> (the Frank-Wolfe gap over all parameters), u = scale * lmo(d).

    Args: as `Scion`, plus
        rho: the D at which the step switches from short-step to full Frank-Wolfe (> 0).
        sharded_params: True only if each process steps a different subset of the parameters;
            then D is all-reduced. Leave False under DDP (see the module docstring).
    """

    constrained = True
    clipped = True

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.05,
        momentum: float = 0.1,
        norm: str = "auto",
        norm_kwargs: dict[str, Any] | None = None,
        scale: float = 1.0,
        rho: float = 1.0,
        sharded_params: bool = False,
    ) -> None:
        super().__init__(params, lr, momentum, norm, norm_kwargs, scale, rho, sharded_params)


class UnconstrainedClippedScion(_ScionBase):
    """Unconstrained Clipped Scion (Alg. 3, GGNC): x <- x + lr eta u, eta = min(1, D / rho),
    D = -sum <d, u> = sum_l scale_l ||d_l||_* (the dual norm of the momentum).

    Args: as `ClippedScion`, except `lr` only has to be >= 0.
    """

    constrained = False
    clipped = True

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.05,
        momentum: float = 0.1,
        norm: str = "auto",
        norm_kwargs: dict[str, Any] | None = None,
        scale: float = 1.0,
        rho: float = 1.0,
        sharded_params: bool = False,
    ) -> None:
        super().__init__(params, lr, momentum, norm, norm_kwargs, scale, rho, sharded_params)
