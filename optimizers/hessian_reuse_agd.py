"""Hessian-reuse AGD: the gradient/Hessian trade-off method as a torch optimizer and a solver.

Restarted accelerated gradient descent in the norm of one approximate Hessian that is reused
across restarts, spending at most n_H Hessian queries (arXiv 2510.20786; the update, φ and the
restart rule are in `optiforge.optimizers.critical_or_progress`). Two front ends share that core:

- `HessianReuseAGD`, a `torch.optim.Optimizer` with torch's `step(closure)` contract: one closure
  call (one gradient query) per step; when a Hessian query is due, the full Hessian of all
  parameters is taken from that call's graph by d batched Hessian-vector products.
- `hessian_reuse_agd(f, x0, ...)`, a solver on a callable f: R^d -> R with autograd gradients
  and `torch.func` Hessians, which stops at the first ‖∇f‖ <= ε and reports exact oracle counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer, ParamsT

from optiforge.optimizers.contract import LoopNeeds
from optiforge.optimizers.critical_or_progress import (
    PAPER_FLOOR,
    CriticalOrProgress,
    OracleCounts,
    require_count,
)
from optiforge.optimizers.validation import require_in_range

STATE_KEY = "critical_or_progress"


@dataclass
class CriticalPointResult:
    """What a critical-point solver returns: the last point, whether ‖∇f‖ <= ε was reached,
    the exact oracle counts and ‖∇f‖ at every gradient query (in query order)."""

    x: Tensor
    converged: bool
    counts: OracleCounts
    grad_norms: list[float] = field(default_factory=list)


class HessianReuseAGD(Optimizer):
    """The method as a torch optimizer over all parameters as one flat vector.

    The closure zeroes the gradients, computes the loss, calls backward and returns the loss. It
    runs once per step (one gradient query, `counts.gradient`). While Hessian queries are left
    (`counts.hessian < n_hessian`) `is_second_order` is True, so the closure's backward should
    use `create_graph=True` (`optiforge.lightning_modules.Classifier` honours it); a step that
    spends a Hessian query builds the d x d Hessian from that graph by d batched Hessian-vector
    products (one Hessian query). A step whose gradient has ‖∇f‖ <= ε leaves the parameters
    unchanged and sets `converged`. H̄ couples all parameters, so the hyperparameters are global,
    not per group, and the Hessian and its eigenbasis take d² memory: meant for small models (d up
    to a few thousand). The one exception is the step size η: it is every group's `lr`, read at
    each step, so torch LR schedulers drive it; H̄ couples the groups, so they must share one
    value (a step with differing group lrs raises, naming them).

    Args:
        params: parameters or parameter groups (groups carry only `lr`).

    `eps`, `n_hessian`, `lipschitz`, `delta`, `refresh_distance`, `lr`, `momentum`,
    `restart_range`, `epoch_length`, `floor`: as in
    `optiforge.optimizers.critical_or_progress.CriticalOrProgress`.
    """

    loop_needs = LoopNeeds(
        closure=True,
        graph=True,
        ddp="unsupported",
        gradient_scaler=False,
        gradient_clipping=False,
        reason="its step needs its closure, and its Hessian comes from the graph of this "
        "process's gradients, which neither clipping nor DDP's all-reduce reaches",
    )

    def __init__(
        self,
        params: ParamsT,
        eps: float = 1e-3,
        n_hessian: int = 1,
        lipschitz: float = 10.0,
        delta: float = 0.01,
        refresh_distance: float = math.inf,
        lr: float = 0.5,
        momentum: float = 0.1,
        restart_range: float = math.inf,
        epoch_length: int = 100,
        floor: float = PAPER_FLOOR,
    ) -> None:
        self.core = CriticalOrProgress(
            eps,
            n_hessian,
            lipschitz,
            delta,
            refresh_distance,
            lr,
            momentum,
            restart_range,
            epoch_length,
            floor,
        )
        super().__init__(params, {"lr": lr})

    @property
    def counts(self) -> OracleCounts:
        """Gradient and Hessian queries made so far (exact)."""
        return self.core.counts

    @property
    def converged(self) -> bool:
        """True once a closure call returned ‖∇f‖ <= ε."""
        return self.core.converged

    @property
    def is_second_order(self) -> bool:
        """True while Hessian queries are left: the closure should keep the graph."""
        return self.core.counts.hessian < self.core.n_hessian

    def state_dict(self) -> dict[str, Any]:
        """torch's (empty) per-parameter state plus the core's iterate, H̄ and counters."""
        state = super().state_dict()
        state[STATE_KEY] = self.core.state_dict()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` saved."""
        if STATE_KEY not in state_dict:
            raise ValueError(
                f"state_dict has no {STATE_KEY!r}: it was not saved by {type(self).__name__}"
            )
        state_dict = dict(state_dict)
        self.core.load_state_dict(state_dict.pop(STATE_KEY))
        super().load_state_dict(state_dict)
        for group in self.param_groups:  # a state saved before groups carried lr
            group.setdefault("lr", self.core.lr)

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor:
        """One gradient query at the current parameters (y_k) and the move to y_{k+1}."""
        if closure is None:
            raise RuntimeError(
                f"{type(self).__name__}.step needs a closure that zeroes the gradients, computes "
                "the loss, calls backward and returns the loss (torch.optim.LBFGS contract)"
            )
        self.core.lr = self._shared_lr()
        params = [p for group in self.param_groups for p in group["params"]]
        with torch.enable_grad():
            loss = closure()
        y = torch.cat([p.detach().reshape(-1) for p in params])
        g = torch.cat(
            [
                torch.zeros_like(p).reshape(-1) if p.grad is None else p.grad.detach().reshape(-1)
                for p in params
            ]
        )
        if not self.core.observe(g):
            if self.core.needs_hessian(y):
                self.core.set_hessian(y, self._hessian(params))
            y_new = self.core.advance(y, g)
            pieces = y_new.split([p.numel() for p in params])
            torch._foreach_copy_(
                params, [v.view_as(p) for v, p in zip(pieces, params, strict=True)]
            )
        for p in params:
            if p.grad is not None and p.grad.grad_fn is not None:
                p.grad = p.grad.detach()  # break the parameter <-> graph cycle of create_graph
        return loss

    def _shared_lr(self) -> float:
        """η for this step: the groups' common `lr` (in [0, 1]; a scheduler may reach 0)."""
        rates = [group["lr"] for group in self.param_groups]
        if any(rate != rates[0] for rate in rates):
            raise ValueError(
                f"param_groups[*].lr must be equal for {type(self).__name__} (H̄ couples all "
                f"parameters), got {rates}"
            )
        require_in_range("lr", rates[0], 0.0, 1.0)
        return float(rates[0])

    def _hessian(self, params: list[Tensor]) -> Tensor:
        """∇²f (d x d) from the graph of the closure's gradients: d HVPs in one batched call."""
        sizes = [p.numel() for p in params]
        d = sum(sizes)
        pairs = [
            (i, p)
            for i, p in enumerate(params)
            if p.grad is not None and p.grad.grad_fn is not None
        ]
        if not pairs:
            raise RuntimeError(
                f"{type(self).__name__} needs a Hessian query but the gradients carry no graph: "
                "call backward(create_graph=True) in the closure (optimizer.is_second_order is "
                "True; optiforge.lightning_modules.Classifier does this)"
            )
        eye = torch.eye(d, dtype=params[0].dtype, device=params[0].device)
        blocks = eye.split(sizes, dim=1)
        with torch.enable_grad():
            rows = torch.autograd.grad(
                [p.grad for _, p in pairs],
                params,
                grad_outputs=[blocks[i].reshape(d, *params[i].shape) for i, _ in pairs],
                is_grads_batched=True,
                allow_unused=True,
            )
        return torch.cat(
            [
                torch.zeros(d, p.numel(), dtype=p.dtype, device=p.device)
                if row is None
                else row.reshape(d, -1)
                for p, row in zip(params, rows, strict=True)
            ],
            dim=1,
        )


def gradient_oracle(f: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """x -> ∇f(x) by one reverse-mode pass (one gradient query; cheaper per call than
    `torch.func.grad` for the tiny functions of the benchmarks)."""

    def gradient(x: Tensor) -> Tensor:
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(f(leaf), leaf)
        return g

    return gradient


def hessian_reuse_agd(
    f: Callable[[Tensor], Tensor],
    x0: Tensor,
    *,
    eps: float,
    n_hessian: int,
    lipschitz: float,
    delta: float,
    refresh_distance: float = math.inf,
    lr: float = 0.5,
    momentum: float = 0.1,
    restart_range: float = math.inf,
    epoch_length: int = 100,
    floor: float = PAPER_FLOOR,
    max_gradient_calls: int = 100_000,
) -> CriticalPointResult:
    """Run the method on f: R^d -> R from x0 (a 1-D tensor) until ‖∇f‖ <= ε or
    `max_gradient_calls` gradient queries; a gradient query is one reverse pass of f at
    one point, a Hessian query `torch.func.hessian(f)` at one point."""
    require_count("max_gradient_calls", max_gradient_calls, minimum=1)
    core = CriticalOrProgress(
        eps,
        n_hessian,
        lipschitz,
        delta,
        refresh_distance,
        lr,
        momentum,
        restart_range,
        epoch_length,
        floor,
    )
    gradient = gradient_oracle(f)
    hessian = torch.func.hessian(f)
    y = x0.detach().clone()
    norms = []
    while core.counts.gradient < max_gradient_calls:
        g = gradient(y)
        converged = core.observe(g)
        norms.append(float(torch.linalg.vector_norm(g)))
        if converged:
            break
        if core.needs_hessian(y):
            core.set_hessian(y, hessian(y))
        y = core.advance(y, g)
    return CriticalPointResult(y, core.converged, core.counts, norms)
