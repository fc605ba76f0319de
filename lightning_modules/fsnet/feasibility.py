"""FSNet's feasibility step: batched L-BFGS on the constraint violation, truncated unrolling.

Every batch row is its own problem min_y scale * phi(y), phi = ||h||^2 + ||relu(g)||^2, with
its own curvature history (memory pairs, two-loop recursion vectorized over the batch), its own
Armijo backtracking step (all rows try their step at once; only failing rows shrink), and its
own stop: a row whose phi is <= tolerance is frozen. The first step of a row is
-first_step * gradient (FSNet's -0.1 grad); later ones scale the initial inverse Hessian by
s.y / y.y of the row's last accepted pair. Pairs with s.y <= 1e-12 |s||y| are skipped.

`scale` (FSNet: 1000) multiplies phi: the Armijo test and the L-BFGS directions do not change
with it, but the first step -first_step * scale * grad phi does (a larger first move).

Differentiation (when y0 requires grad and grad mode is on): the first `unrolled_iter`
iterations keep the autograd graph (gradients of phi taken with create_graph=True; line-search
decisions are constants), the rest run detached, and the output is straight-through,
y_hat = y_K + (y_final - y_K).detach(): values of the final iterate, gradients of iterate K.
Cost per iteration: one phi + gradient evaluation, one phi evaluation of the batch for the first
line-search trial and one of the still-backtracking rows per later trial;
the unrolled iterations keep their graphs (memory linear in unrolled_iter, and backward costs
about a second-order pass through each of them). Without grad everything is detached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

CURVATURE_EPS = 1e-12


@dataclass(frozen=True)
class FeasibilityResult:
    """y [B, n] (straight-through output), violation [B] at it (detached, unscaled), and the
    number of iterations run."""

    y: Tensor
    violation: Tensor
    iterations: int


class FeasibilitySeeker:
    """Args:
    max_iter: L-BFGS iterations at most (>= 0).
    unrolled_iter: leading iterations kept in the autograd graph (0..max_iter).
    memory: curvature pairs kept per row (>= 1).
    scale: multiplier of the violation (> 0).
    tolerance: default stop tolerance on each row's squared violation (>= 0).
    armijo: sufficient-decrease constant c in (0, 1); backtrack: step shrink factor in (0, 1).
    first_step: step along -gradient before any curvature pair exists (> 0).
    max_backtracks: trials per iteration; a row with no acceptable step stays put (>= 1).
    """

    def __init__(
        self,
        max_iter: int = 50,
        unrolled_iter: int = 30,
        memory: int = 30,
        scale: float = 1000.0,
        tolerance: float = 1e-7,
        armijo: float = 1e-4,
        backtrack: float = 0.5,
        first_step: float = 0.1,
        max_backtracks: int = 30,
    ) -> None:
        checks = {
            "max_iter": (max_iter >= 0, ">= 0"),
            "unrolled_iter": (0 <= unrolled_iter <= max_iter, f"in [0, max_iter = {max_iter}]"),
            "memory": (memory >= 1, ">= 1"),
            "scale": (scale > 0, "> 0"),
            "tolerance": (tolerance >= 0, ">= 0"),
            "armijo": (0 < armijo < 1, "in (0, 1)"),
            "backtrack": (0 < backtrack < 1, "in (0, 1)"),
            "first_step": (first_step > 0, "> 0"),
            "max_backtracks": (max_backtracks >= 1, ">= 1"),
        }
        for field, (ok, allowed) in checks.items():
            if not ok:
                raise ValueError(f"{field} must be {allowed}, got {locals()[field]}")
        self.max_iter, self.unrolled_iter, self.memory = max_iter, unrolled_iter, memory
        self.scale, self.tolerance, self.armijo = scale, tolerance, armijo
        self.backtrack, self.first_step, self.max_backtracks = backtrack, first_step, max_backtracks

    def _value_and_gradient(
        self, violation: Callable[[Tensor, Tensor], Tensor], y: Tensor, x: Tensor, graph: bool
    ) -> tuple[Tensor, Tensor]:
        """scale * phi(y) [B] and its gradient [B, n]; kept in the graph iff `graph`."""
        with torch.enable_grad():
            point = y if graph else y.detach().requires_grad_(True)
            value = self.scale * violation(point, x)
            (gradient,) = torch.autograd.grad(value.sum(), point, create_graph=graph)
        if graph:
            return value, gradient
        return value.detach(), gradient.detach()

    def _direction(
        self, gradient: Tensor, pairs: list[tuple[Tensor, Tensor, Tensor]], gamma: Tensor
    ) -> Tensor:
        """-H gradient by the two-loop recursion; rho = 0 marks a skipped pair of a row."""
        q = gradient
        alphas = []
        for s, y, rho in reversed(pairs):
            alpha = rho * torch.linalg.vecdot(s, q)
            q = torch.addcmul(q, alpha[:, None], y, value=-1)
            alphas.append(alpha)
        r = gamma[:, None] * q
        for (s, y, rho), alpha in zip(pairs, reversed(alphas), strict=True):
            beta = rho * torch.linalg.vecdot(y, r)
            r = torch.addcmul(r, (alpha - beta)[:, None], s)
        return -r

    def _step_sizes(
        self,
        violation: Callable[[Tensor, Tensor], Tensor],
        y: Tensor,
        x: Tensor,
        value: Tensor,
        slope: Tensor,
        direction: Tensor,
        active: Tensor,
    ) -> Tensor:
        """Per-row Armijo step (0 for inactive rows and rows without an acceptable step). The
        first trial evaluates the whole batch; later ones only the rows still backtracking."""
        with torch.no_grad():
            y, value, slope, direction = (
                y.detach(),
                value.detach(),
                slope.detach(),
                direction.detach(),
            )
            step = torch.ones_like(value)
            pending = active & (slope < 0)  # not a descent direction: no move
            found = torch.zeros_like(pending)
            rows: Tensor | None = None  # None: every row
            for _ in range(self.max_backtracks):
                if rows is None:
                    trial = self.scale * violation(y + step[:, None] * direction, x)
                    ok = pending & (trial <= value + self.armijo * step * slope)
                    found |= ok
                    pending &= ~ok
                else:
                    at = step[rows]
                    trial = self.scale * violation(y[rows] + at[:, None] * direction[rows], x[rows])
                    ok = trial <= value[rows] + self.armijo * at * slope[rows]
                    found[rows[ok]] = True
                    pending[rows[ok]] = False
                if not bool(pending.any()):
                    break
                step = torch.where(pending, self.backtrack * step, step)
                rows = pending.nonzero().squeeze(1)
            return torch.where(found, step, torch.zeros_like(step))

    def __call__(
        self,
        violation: Callable[[Tensor, Tensor], Tensor],
        y0: Tensor,
        x: Tensor,
        tolerance: float | None = None,
    ) -> FeasibilityResult:
        """Run the step from y0 [B, n] for the instances x [B, ...]; `violation(y, x)` gives each
        row's squared violation (rows independent: the line search evaluates row subsets)."""
        if y0.dim() != 2:
            raise ValueError(f"y0 must have shape [B, n], got {tuple(y0.shape)}")
        if x.shape[0] != y0.shape[0]:
            raise ValueError(f"x must have one row per row of y0 ({y0.shape[0]}), got {x.shape[0]}")
        if not bool(torch.isfinite(y0).all()):
            raise ValueError("y0 must be finite: it contains NaN or inf")
        tolerance = self.tolerance if tolerance is None else tolerance
        if tolerance < 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance}")
        differentiable = y0.requires_grad and torch.is_grad_enabled()
        unrolled = self.unrolled_iter if differentiable else 0
        y = y0 if differentiable else y0.detach()
        anchor: Tensor | None = None  # the last iterate kept in the graph
        value, gradient = self._value_and_gradient(violation, y, x, graph=unrolled > 0)
        pairs: list[tuple[Tensor, Tensor, Tensor]] = []
        gamma = torch.full_like(value.detach(), self.first_step)
        iterations = 0
        for iteration in range(self.max_iter):
            if iteration == unrolled and differentiable:
                anchor = y
                y, value, gradient = y.detach(), value.detach(), gradient.detach()
                pairs = [(s.detach(), g.detach(), r.detach()) for s, g, r in pairs]
                gamma = gamma.detach()
            active = value.detach() > self.scale * tolerance
            if not bool(active.any()):
                break
            iterations += 1
            graph = iteration < unrolled
            direction = self._direction(gradient, pairs, gamma)
            slope = (gradient * direction).sum(dim=-1)
            step = self._step_sizes(violation, y, x, value, slope, direction, active)
            y_next = y + step[:, None] * direction
            value_next, gradient_next = self._value_and_gradient(violation, y_next, x, graph)
            s, change = y_next - y, gradient_next - gradient
            curvature = (s * change).sum(dim=-1)
            norms = s.detach().norm(dim=-1) * change.detach().norm(dim=-1)
            valid = (curvature.detach() > CURVATURE_EPS * norms) & (step > 0)
            rho = torch.where(valid, 1.0 / torch.where(valid, curvature, 1.0), 0.0)
            pairs = [*pairs, (s, change, rho)][-self.memory :]
            gamma_new = curvature / change.square().sum(dim=-1).clamp_min(1e-300)
            gamma = torch.where(valid, gamma_new, gamma)
            y, value, gradient = y_next, value_next, gradient_next
        final = y.detach()
        anchor = y if anchor is None else anchor
        out = anchor + (final - anchor).detach() if differentiable else final
        with torch.no_grad():
            final_violation = violation(final, x).detach()
        return FeasibilityResult(y=out, violation=final_violation, iterations=iterations)
