"""Forward-only (zeroth-order) SGD: unbiased telescoping estimators (Ma & Huang 2025) and MeZO.

One step draws `directions` seeded directions v_k; for each it evaluates the closure (forward
pass only, run under `torch.no_grad`) at a few points w + t_i v_k and forms the scalar projected
gradient P_k = sum_i c_i f(w + t_i v_k); the update is w <- w (1 - lr wd) - lr mean_k P_k v_k.
Directions are regenerated from their seeds and the weights are moved in place and restored
exactly (`optiforge.optimizers.zo_perturbation`), so memory is that of inference plus a few
direction chunks (at most 2^18 entries each). Under torch.distributed each rank draws its own
directions (seed, step, rank, k) and evaluates its own batch; the scalars are all-gathered and every
rank applies the mean over all ranks' directions, regenerating each from its seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import torch
import torch.distributed as dist
from torch.optim import Optimizer

from optiforge.optimizers.contract import LoopBinding, multi_pass
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_choice, require_non_negative, require_positive
from optiforge.optimizers.zo_estimators import CONSTRUCTIONS, Terms, sample_terms
from optiforge.optimizers.zo_perturbation import (
    DirectionKind,
    SeededDirection,
    derive_seed,
    perturbed,
)
from optiforge.optimizers.zo_schedules import make_schedule

Closure = Callable[[], Any]


class ZerothOrder(LoopBinding, Optimizer):
    """Shared step of the forward-only optimizers; a subclass says which points to evaluate.

    `loop_needs.forward_only` tells `optiforge.callbacks.OptimizerAdapter` to switch Lightning's
    backward off. Every closure call runs inside the loop's `pass_context(SharpnessPass(...))`
    with `sharpness_pass` set (`optiforge.optimizers.contract`): only the first evaluation of a
    step is reported (`log=True`).
    """

    loop_needs = multi_pass(
        "it evaluates its closure (forward only) at several perturbed weights per step, "
        "and finite differences of 16-bit losses are rounding noise",
        forward_only=True,
        ddp="per_rank",
        half_precision=False,
        reports="first_evaluation",
    )
    direction_kind: DirectionKind = "gaussian"

    def __init__(
        self, params: Iterable[Any], lr: float, directions: int, weight_decay: float, seed: int
    ) -> None:
        require_non_negative("lr", lr)
        require_non_negative("weight_decay", weight_decay)
        if isinstance(directions, bool) or not isinstance(directions, int) or directions < 1:
            raise ValueError(f"directions must be an integer >= 1, got {directions!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay})
        self.directions, self.seed = directions, seed
        self.steps = 0
        self.evaluations = 0
        self.restored_entries = 0
        self.frozen: set[int]  # ids of the parameters left alone, set by add_param_group

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Check a group's own `lr` / `weight_decay` before adding it. Parameters that do not
        require gradients now stay untouched, as a gradient optimizer leaves them (a callback
        may switch `requires_grad` off later for forward-only training)."""
        for name in ("lr", "weight_decay"):
            if name in param_group:
                require_non_negative(name, param_group[name])
        super().add_param_group(param_group)
        frozen = self.__dict__.setdefault("frozen", set())
        frozen.update(id(p) for p in self.param_groups[-1]["params"] if not p.requires_grad)

    def sample_terms(self, generator: torch.Generator) -> Terms:
        """(offset t_i, coefficient c_i) pairs of one projected-gradient estimate."""
        raise NotImplementedError

    def _params(self, group: dict[str, Any] | None = None) -> list[torch.Tensor]:
        """The trainable parameters (of `group`, else of every group) in a fixed order."""
        groups = self.param_groups if group is None else [group]
        return [p for g in groups for p in g["params"] if id(p) not in self.frozen]

    def _evaluate(self, closure: Closure, reported: bool, perturbed_weights: bool) -> float:
        sharp = SharpnessPass(perturbed=perturbed_weights, log=reported)
        with torch.no_grad(), self.loop_pass(sharp):
            loss = closure()
        self.evaluations += 1
        if any(p.grad is not None for p in self._params()):
            raise RuntimeError(
                f"{type(self).__name__} is forward-only but its closure ran a backward pass "
                "(parameters got gradients); under Lightning add "
                "optiforge.callbacks.OptimizerAdapter to the Trainer (train.py does), in a plain "
                "loop let the closure return the loss only"
            )
        return float(loss)

    def _direction(self, rank: int, k: int) -> SeededDirection:
        seed = derive_seed(self.seed, self.steps, rank, k, 0)
        return SeededDirection(self._params(), seed, self.direction_kind)

    def _estimates(self, closure: Closure, rank: int) -> tuple[list[float], float]:
        """This rank's P_k for every direction and the reported (first) loss."""
        for p in self._params():
            p.grad = None
        base: float | None = None
        first: float | None = None
        estimates = []
        for k in range(self.directions):
            scalar_seed = derive_seed(self.seed, self.steps, rank, k, 1)
            generator = torch.Generator().manual_seed(scalar_seed)
            direction = self._direction(rank, k)
            value = 0.0
            for offset, coefficient in self.sample_terms(generator):
                if offset == 0.0:
                    if base is None:
                        base = self._evaluate(closure, first is None, False)
                    loss = base
                else:
                    with perturbed(direction, offset) as fixed:
                        loss = self._evaluate(closure, first is None, True)
                    self.restored_entries += fixed
                first = loss if first is None else first
                value += coefficient * loss
            estimates.append(value)
        return estimates, float("nan") if first is None else first

    @torch.no_grad()
    def step(self, closure: Closure | None = None) -> torch.Tensor:  # type: ignore[override]
        """One forward-only step; returns the first loss evaluated (at w when the estimate
        uses f(w), else at the first perturbed point, as MeZO reports)."""
        if closure is None:
            raise RuntimeError(f"{type(self).__name__}.step needs a closure returning the loss")
        self.check_loop(closure)
        distributed = dist.is_available() and dist.is_initialized()
        rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
        estimates, first = self._estimates(closure, rank)
        device = self.param_groups[0]["params"][0].device
        local = torch.tensor(estimates, dtype=torch.float64, device=device)
        gathered = [torch.empty_like(local) for _ in range(world)]
        if distributed:
            dist.all_gather(gathered, local)
        else:
            gathered = [local]
        for group in self.param_groups:
            if group["weight_decay"] and self._params(group):
                torch._foreach_mul_(self._params(group), 1.0 - group["lr"] * group["weight_decay"])
        count = world * self.directions
        lr_of = {p: group["lr"] for group in self.param_groups for p in group["params"]}
        for r, values in enumerate(gathered):
            for k, value in enumerate(values.tolist()):
                for p, piece, v in self._direction(r, k).scaled(1.0):
                    piece.add_(v, alpha=-lr_of[p] * value / count)
        self.steps += 1
        return torch.tensor(first)

    def state_dict(self) -> dict[str, Any]:
        """Torch's state dict plus the step counter that seeds the directions."""
        return {**super().state_dict(), "zo_steps": self.steps}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load groups and the step counter (resuming continues the same direction stream)."""
        state_dict = dict(state_dict)
        self.steps = int(state_dict.pop("zo_steps", 0))
        super().load_state_dict(state_dict)


class TelescopingZO(ZerothOrder):
    """SGD with Ma & Huang's unbiased telescoping estimator, v uniform on the sqrt(d) sphere.

    Args:
        params: parameters or parameter groups (groups may set `lr`, `weight_decay`).
        lr: step size eta (>= 0).
        construction: "P4" (4 evaluations), "P3" (2 or 3; the paper's choice), "P2" (2), "P1" (1);
            P2 and P1 have an infinite-mean |P| (see `optiforge.optimizers.zo_estimators`).
        schedule: "geometric" (mu_n = mu c^(n-1)) or "zipf" (mu_n = mu P(N >= n)), each with its
            variance-optimal p_n = (mu_n - mu_{n+1}) / mu.
        mu: first perturbation step mu_1 (> 0).
        ratio: the geometric c, in (0, 1).
        exponent: the Zipf s, > 2 (summable step sizes).
        directions: directions per step (>= 1), averaged.
        weight_decay: decoupled, lr * wd * w per step (MeZO's form).
        seed: seed of the direction and (N, U) streams.
    """

    direction_kind: DirectionKind = "sphere"

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        construction: Literal["P4", "P3", "P2", "P1"] = "P3",
        schedule: Literal["geometric", "zipf"] = "geometric",
        mu: float = 1e-3,
        ratio: float = 0.5,
        exponent: float = 3.0,
        directions: int = 1,
        weight_decay: float = 0.0,
        seed: int = 0,
    ) -> None:
        require_choice("construction", construction, CONSTRUCTIONS)
        self.construction = construction
        self.schedule = make_schedule(schedule, mu, ratio, exponent)
        super().__init__(params, lr, directions, weight_decay, seed)

    def sample_terms(self, generator: torch.Generator) -> Terms:
        return sample_terms(self.construction, self.schedule, generator)


class MeZO(ZerothOrder):
    """MeZO (Malladi et al. 2023): Gaussian z, g = (f(w + eps z) - f(w - eps z)) / (2 eps).

    Args:
        params: parameters or parameter groups (groups may set `lr`, `weight_decay`; MeZO puts
            biases and LayerNorm weights in a group with weight_decay 0).
        lr: step size (>= 0).
        eps: perturbation scale (> 0).
        directions: directions per step (>= 1), averaged.
        weight_decay: decoupled, as MeZO: w <- w - lr (g z + wd w).
        seed: seed of the direction stream.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        eps: float = 1e-3,
        directions: int = 1,
        weight_decay: float = 0.0,
        seed: int = 0,
    ) -> None:
        require_positive("eps", eps)
        self.eps = eps
        super().__init__(params, lr, directions, weight_decay, seed)

    def sample_terms(self, generator: torch.Generator) -> Terms:
        half = 0.5 / self.eps
        return [(self.eps, half), (-self.eps, -half)]
