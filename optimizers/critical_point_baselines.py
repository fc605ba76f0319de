"""Peers of `hessian_reuse_agd` for finding ‖∇f‖ <= ε, with the same exact oracle counts.

- gradient descent x ← x - ∇f(x) / L₁ (one gradient query per step, no Hessian);
- cubic-regularized Newton (Nesterov and Polyak 2006): every step one gradient and one Hessian
  query and the exact minimizer of the cubic model g·s + ½ sᵀHs + (M/6)‖s‖³.

Restarted Nesterov AGD is `hessian_reuse_agd(..., n_hessian=0)` (H̄ = L₁ I).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from optiforge.optimizers.critical_or_progress import OracleCounts, require_count
from optiforge.optimizers.hessian_reuse_agd import CriticalPointResult, gradient_oracle
from optiforge.optimizers.validation import require_positive

BISECTION_STEPS = 200


def gradient_descent(
    f: Callable[[Tensor], Tensor],
    x0: Tensor,
    *,
    eps: float,
    lipschitz: float,
    max_gradient_calls: int = 100_000,
) -> CriticalPointResult:
    """x ← x - ∇f(x)/L₁ from x0 until ‖∇f‖ <= ε or `max_gradient_calls` gradient queries."""
    require_positive("eps", eps)
    require_positive("lipschitz", lipschitz)
    require_count("max_gradient_calls", max_gradient_calls, minimum=1)
    gradient = gradient_oracle(f)
    x = x0.detach().clone()
    counts = OracleCounts()
    norms = []
    while counts.gradient < max_gradient_calls:
        g = gradient(x)
        counts.gradient += 1
        norms.append(float(torch.linalg.vector_norm(g)))
        if norms[-1] <= eps:
            return CriticalPointResult(x, True, counts, norms)
        x = x - g / lipschitz
    return CriticalPointResult(x, False, counts, norms)


def cubic_step(g: Tensor, hessian: Tensor, regularization: float) -> Tensor:
    """The global minimizer s of g·s + ½ sᵀHs + (M/6)‖s‖³: s = -(H + M r/2 I)⁻¹ g with r = ‖s‖
    and H + M r/2 I ⪰ 0, r found by bisection in H's eigenbasis (the hard case adds a multiple
    of the bottom eigenvector to reach the norm r)."""
    eigenvalues, basis = torch.linalg.eigh((hessian + hessian.T) / 2.0)
    coefficients = basis.T @ g
    m = regularization
    low = max(0.0, -2.0 * float(eigenvalues[0]) / m)  # H + M r/2 I ⪰ 0 needs r >= low

    def norm_at(r: float) -> float:
        """‖(H + M r/2 I)⁻¹ g‖, infinite where the shifted matrix is singular along g."""
        shifted = eigenvalues + m * r / 2.0
        if torch.any((shifted <= 0) & (coefficients != 0)):
            return math.inf
        safe = torch.where(shifted > 0, shifted, torch.ones_like(shifted))
        return float(torch.linalg.vector_norm(torch.where(shifted > 0, coefficients / safe, 0.0)))

    bottom = eigenvalues <= eigenvalues[0]
    if low > 0 and torch.all(coefficients[bottom] == 0) and norm_at(low) <= low:
        # hard case: g has no part along the bottom eigenvectors; fill the norm r = low there
        shifted = eigenvalues + m * low / 2.0
        part = torch.where(bottom, 0.0, -coefficients / torch.where(bottom, 1.0, shifted))
        part[0] = max(low**2 - float(part @ part), 0.0) ** 0.5
        return basis @ part
    high = max(2.0 * low, 1.0)
    while norm_at(high) > high:
        high *= 2.0
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2.0
        low, high = (middle, high) if norm_at(middle) > middle else (low, middle)
    r = (low + high) / 2.0
    return basis @ (-coefficients / (eigenvalues + m * r / 2.0))


def cubic_newton(
    f: Callable[[Tensor], Tensor],
    x0: Tensor,
    *,
    eps: float,
    hessian_lipschitz: float,
    max_iterations: int = 10_000,
) -> CriticalPointResult:
    """x ← x + s with s the cubic model's minimizer (M = `hessian_lipschitz`), from x0 until
    ‖∇f‖ <= ε; each iteration spends one gradient query and, unless ε is met, one Hessian."""
    require_positive("eps", eps)
    require_positive("hessian_lipschitz", hessian_lipschitz)
    require_count("max_iterations", max_iterations, minimum=1)
    gradient = gradient_oracle(f)
    hessian = torch.func.hessian(f)
    x = x0.detach().clone()
    counts = OracleCounts()
    norms = []
    while counts.gradient < max_iterations:
        g = gradient(x)
        counts.gradient += 1
        norms.append(float(torch.linalg.vector_norm(g)))
        if norms[-1] <= eps:
            return CriticalPointResult(x, True, counts, norms)
        h = hessian(x)
        counts.hessian += 1
        x = x + cubic_step(g, h, hessian_lipschitz)
    return CriticalPointResult(x, False, counts, norms)
