"""Momentum from longer-horizon planning when the landscape's eigenbasis is unknown.

If the agent knows only the spectrum of H (a belief: eigenvalues λ_i, equally likely directions,
x_0 ~ N(0, I)) and not its eigenbasis, its rule must act alike in every direction: a linear
filter of past gradients. Within the heavy-ball class u_t = β u_{t-1} - α g_t (u_{-1} = 0), the
expected accumulated loss over N steps is

    J_N(α, β) = Σ_i Σ_{t=1..N} ½ λ_i c_t(λ_i)²,   c_{t+1} = (1 + β - α λ) c_t - β c_{t-1},

c_0 = c_{-1} = 1. For N = 1 the cost does not depend on β, and its minimiser is gradient descent
with α = Σ λ² / Σ λ³ (the exact line-search step for x_0 = the all-ones vector); for longer N the
minimiser has β > 0, growing with N (compared with Polyak's heavy-ball tuning in the docs).
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from optiforge.algorithms.learning_rules.riccati import require_horizon


def accumulated_loss(alpha: float, beta: float, eigenvalues: np.ndarray, horizon: int) -> float:
    """J_N(α, β) above, divided by the number of eigenvalues."""
    previous = current = np.ones_like(eigenvalues)
    total = 0.0
    for _ in range(horizon):
        previous, current = current, (1 + beta - alpha * eigenvalues) * current - beta * previous
        total += float(np.mean(0.5 * eigenvalues * current**2))
    return total


def optimal_linear_rule(eigenvalues: np.ndarray, horizon: int) -> tuple[float, float]:
    """(α, β) minimising J_N; β = 0 for N = 1, where it has no effect."""
    require_horizon(horizon)
    eigenvalues = np.asarray(eigenvalues, dtype=np.float64)
    if eigenvalues.ndim != 1 or eigenvalues.size == 0 or not np.all(eigenvalues > 0):
        raise ValueError("eigenvalues must be a non-empty 1-d array of positive numbers")
    gd_step = float(np.sum(eigenvalues**2) / np.sum(eigenvalues**3))
    if horizon == 1:
        return gd_step, 0.0

    def cost(z: np.ndarray) -> float:
        return np.log(accumulated_loss(float(z[0]), float(z[1]), eigenvalues, horizon))

    bounds = [(1e-6 / eigenvalues.max(), 4.0 / eigenvalues.max()), (0.0, 0.999)]
    best = None
    for beta0 in (0.0, 0.5, 0.9):
        result = scipy.optimize.minimize(
            cost, np.array([gd_step, beta0]), method="L-BFGS-B", bounds=bounds
        )
        if best is None or result.fun < best.fun:
            best = result
    return float(best.x[0]), float(best.x[1])


def polyak_heavy_ball(smallest: float, largest: float) -> tuple[float, float]:
    """Polyak's tuning for eigenvalues in [μ, L]: α = 4/(√L + √μ)², β = ((√κ-1)/(√κ+1))²."""
    root_kappa = np.sqrt(largest / smallest)
    alpha = 4.0 / (np.sqrt(largest) + np.sqrt(smallest)) ** 2
    return float(alpha), float(((root_kappa - 1) / (root_kappa + 1)) ** 2)
