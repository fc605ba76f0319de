"""Critical-or-Progress: restarted accelerated gradient descent in the norm of a reused Hessian.

The core of "Balancing Gradient and Hessian Queries in Non-Convex Optimization" (arXiv
2510.20786, Alg. 1), on one flat parameter vector. From a δ-approximate Hessian
H = Σ_j λ_j h_j h_jᵀ queried at some point, the method builds the positive definite

    H̄ = Σ_j φ(λ_j) h_j h_jᵀ,   φ(λ) = (32δ + |λ|) ⌈log₂(L₁/δ)⌉ / ⌈log₂(max{|λ|, 2δ}/δ)⌉

and runs accelerated gradient descent on f̂(x̂) = f(H̄^{-1/2} x̂), i.e. in x coordinates

    x_{k+1} = y_k - η H̄⁻¹ ∇f(y_k),   y_{k+1} = x_{k+1} + (1 - θ)(x_{k+1} - x_k),

restarting (x_0 = y_0 = x_k, momentum dropped) when k Σ_{t<k} ‖x_{t+1} - x_t‖²_H̄ > B² or
k = K, the restart rule of Li and Lin's restarted AGD (2022) that the paper's update range B
and iteration count K parametrize. The same H̄ is reused across restarts until the iterate has
moved more than `refresh_distance` (Euclidean) from the point where H was queried; then the next
of the n_H Hessian queries is spent. With no Hessian (n_H = 0, or before the first query)
H̄ = L₁ I, which is plain restarted AGD with step η / L₁.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from optiforge.optimizers.validation import require_in_range, require_positive

# the paper's floor: every eigenvalue of H̄ is at least 32δ
PAPER_FLOOR = 32.0


@dataclass
class OracleCounts:
    """Exact numbers of oracle calls: one gradient query = one ∇f (with f) at one point; one
    Hessian query = one full d x d Hessian ∇²f at one point (d Hessian-vector products)."""

    gradient: int = 0
    hessian: int = 0


def require_count(field: str, value: int, minimum: int = 0) -> None:
    """Raise `ValueError` unless `value` is an int >= `minimum` (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{field} must be an integer >= {minimum}, got {value!r}")


def curvature_scale(
    eigenvalues: Tensor, delta: float, lipschitz: float, floor: float = PAPER_FLOOR
) -> Tensor:
    """φ(λ) for every eigenvalue: |λ| plus floor·δ (32δ in the paper), times a log-ratio that
    inflates the small-curvature directions (1 for |λ| near L₁, ⌈log₂(L₁/δ)⌉ for |λ| <= 2δ)."""
    levels = math.ceil(math.log2(lipschitz / delta))
    magnitude = eigenvalues.abs()
    band = torch.ceil(torch.log2(magnitude.clamp(min=2.0 * delta) / delta))
    return (floor * delta + magnitude) * levels / band


def reuse_schedule(
    n_hessian: int, travel: float, hessian_lipschitz: float, lipschitz: float
) -> tuple[float, float]:
    """(δ, refresh_distance) for a budget of n_H Hessians over a path of length D = `travel`:
    r = D / n_H and δ = min(L₂ r, L₁/2), since a Hessian queried at x̄ is L₂ r-accurate on the
    ball of radius r around x̄. Our reading of the bound (not a formula of the paper): gradient
    queries per Critical-or-Progress call grow like √δ, so like (L₂ D / n_H)^{1/2}. n_H = 0
    gives (L₁/2, inf), where δ is unused."""
    require_count("n_hessian", n_hessian)
    require_positive("travel", travel)
    require_positive("hessian_lipschitz", hessian_lipschitz)
    require_positive("lipschitz", lipschitz)
    if n_hessian == 0:
        return lipschitz / 2.0, math.inf
    radius = travel / n_hessian
    return min(hessian_lipschitz * radius, lipschitz / 2.0), radius


class CriticalOrProgress:
    """The method's state machine on a flat vector: feed it y_k and ∇f(y_k), get y_{k+1}.

    Callers own the oracles: they ask `needs_hessian(y)` before `advance`, and when it is True
    pass ∇²f(y) to `set_hessian`. Every tensor of the state lives on the iterate's device.

    Args:
        eps: ε > 0, the target gradient norm ‖∇f(y)‖ <= ε (then the iterate stops moving).
        n_hessian: n_H >= 0, the number of Hessian queries the run may spend.
        lipschitz: L₁ > 0, the gradient Lipschitz constant (φ's log levels; H̄ = L₁ I without
            a Hessian).
        delta: δ in (0, L₁/2], the accuracy of the reused Hessian (the floor of H̄ is 32δ).
        refresh_distance: r > 0, the distance from the last Hessian point after which the next
            Hessian query is spent (inf: one Hessian, reused for the whole run).
        lr: η in (0, 1], the step in the H̄ geometry.
        momentum: θ in (0, 1], 1 - θ is the extrapolation weight (θ = 1: no momentum).
        restart_range: B > 0, the update range of the movement restart (H̄ norm).
        epoch_length: K >= 1, the iterations after which AGD restarts at the latest x.
        floor: c > 0 in φ's c·δ + |λ| (the paper's c = 32; smaller c means longer steps).
    """

    def __init__(
        self,
        eps: float,
        n_hessian: int,
        lipschitz: float,
        delta: float,
        refresh_distance: float,
        lr: float,
        momentum: float,
        restart_range: float,
        epoch_length: int,
        floor: float = PAPER_FLOOR,
    ) -> None:
        require_positive("eps", eps)
        require_count("n_hessian", n_hessian)
        require_positive("lipschitz", lipschitz)
        require_in_range("delta", delta, 0.0, lipschitz / 2.0, low_open=True)
        require_positive("refresh_distance", refresh_distance)
        require_in_range("lr", lr, 0.0, 1.0, low_open=True)
        require_in_range("momentum", momentum, 0.0, 1.0, low_open=True)
        require_positive("restart_range", restart_range)
        require_count("epoch_length", epoch_length, minimum=1)
        require_positive("floor", floor)
        self.eps = eps
        self.n_hessian = n_hessian
        self.lipschitz = lipschitz
        self.delta = delta
        self.refresh_distance = refresh_distance
        self.lr = lr
        self.momentum = momentum
        self.restart_range = restart_range
        self.epoch_length = epoch_length
        self.floor = floor
        self.counts = OracleCounts()
        self.converged = False
        self.restarts = 0
        self.state: dict[str, Tensor] = {}  # x_prev, hessian_point, basis, scale
        self.step_in_epoch = 0
        self.movement = 0.0  # Σ_{t<k} ‖x_{t+1} - x_t‖²_H̄ in the current epoch

    def precondition(self, g: Tensor) -> Tensor:
        """H̄⁻¹ g (L₁⁻¹ g without a Hessian)."""
        if "basis" not in self.state:
            return g / self.lipschitz
        basis = self.state["basis"]
        return basis @ ((basis.T @ g) / self.state["scale"])

    def norm_sq(self, v: Tensor) -> float:
        """‖v‖²_H̄ = vᵀ H̄ v (L₁ ‖v‖² without a Hessian)."""
        if "basis" not in self.state:
            return self.lipschitz * float(v @ v)
        return float((self.state["scale"] * (self.state["basis"].T @ v) ** 2).sum())

    def needs_hessian(self, y: Tensor) -> bool:
        """True when a Hessian query is left and none was made yet or y left the ball of radius
        `refresh_distance` around the last Hessian point."""
        if self.counts.hessian >= self.n_hessian:
            return False
        point = self.state.get("hessian_point")
        return point is None or float(torch.linalg.vector_norm(y - point)) > self.refresh_distance

    def set_hessian(self, y: Tensor, hessian: Tensor) -> None:
        """Count one Hessian query at y, build H̄ from its eigenpairs, restart AGD at y."""
        symmetric = (hessian + hessian.T) / 2.0
        eigenvalues, basis = torch.linalg.eigh(symmetric)
        self.state["basis"] = basis
        self.state["scale"] = curvature_scale(eigenvalues, self.delta, self.lipschitz, self.floor)
        self.state["hessian_point"] = y.detach().clone()
        self.counts.hessian += 1
        self.restart(y)

    def restart(self, x: Tensor) -> None:
        """Start a new AGD epoch at x_0 = y_0 = x (momentum and movement dropped)."""
        self.state["x_prev"] = x.detach().clone()
        self.step_in_epoch = 0
        self.movement = 0.0
        self.restarts += 1

    def observe(self, g: Tensor) -> bool:
        """Count one gradient query; True (and `converged`) when ‖g‖ <= ε."""
        self.counts.gradient += 1
        self.converged = float(torch.linalg.vector_norm(g)) <= self.eps
        return self.converged

    def advance(self, y: Tensor, g: Tensor) -> Tensor:
        """y_{k+1} from y_k and ∇f(y_k) (y itself once ‖g‖ <= ε); applies the restart rule."""
        if self.converged:
            return y
        if "x_prev" not in self.state:
            self.restart(y)
        x_new = y - self.lr * self.precondition(g)
        self.movement += self.norm_sq(x_new - self.state["x_prev"])
        self.step_in_epoch += 1
        k = self.step_in_epoch
        if k * self.movement > self.restart_range**2 or k >= self.epoch_length:
            self.restart(x_new)
            return x_new
        y_new = x_new + (1.0 - self.momentum) * (x_new - self.state["x_prev"])
        self.state["x_prev"] = x_new
        return y_new

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the run exactly (tensors cloned)."""
        return {
            "tensors": {key: value.clone() for key, value in self.state.items()},
            "gradient_calls": self.counts.gradient,
            "hessian_calls": self.counts.hessian,
            "converged": self.converged,
            "restarts": self.restarts,
            "step_in_epoch": self.step_in_epoch,
            "movement": self.movement,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict()` saved."""
        self.state = {key: value.clone() for key, value in state["tensors"].items()}
        self.counts = OracleCounts(state["gradient_calls"], state["hessian_calls"])
        self.converged = state["converged"]
        self.restarts = state["restarts"]
        self.step_in_epoch = state["step_in_epoch"]
        self.movement = state["movement"]
