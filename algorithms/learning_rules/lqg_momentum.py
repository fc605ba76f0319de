"""Heavy-ball momentum as the LQG solution for noisy gradients (partial observability).

Per eigen-direction of H (curvature h): x_{t+1} = x_t + u_t + w_t (the optimum drifts, var q),
the agent sees only the noisy gradient y_t = h x_t + ε_t (var σ²), and pays Σ (½ r u² + ½ h x²)
over the horizon. By separation the optimal rule is u_t = -k_t x̂_t with k_t the LQR gain and
x̂_t the Kalman estimate x̂_t = x̄_t + ℓ (y_t - h x̄_t), x̄_t = x̂_{t-1} + u_{t-1}. Eliminating
x̂ gives (derivation in docs/learning_rules.md), for stationary gains k and ℓ,

    u_t = β u_{t-1} - α y_t,   β = (1 - ℓ h)(1 - k),   α = k ℓ,

exactly heavy-ball momentum (torch SGD: v ← β v + g, θ ← θ - α v).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optiforge.algorithms.learning_rules.riccati import finite_horizon_lqr, stationary_kalman


@dataclass(frozen=True)
class LqgMomentum:
    """The LQG rule's momentum form: `beta`, `lr` (= α), and the gains `k`, `kalman` (= ℓ)."""

    beta: float
    lr: float
    k: float
    kalman: float


def validate(curvature: float, control_cost: float, drift: float, noise: float) -> None:
    """Raise `ValueError` naming the first out-of-range field."""
    if not curvature > 0:
        raise ValueError(f"curvature must be > 0, got {curvature}")
    if not control_cost >= 0:
        raise ValueError(f"control_cost must be >= 0, got {control_cost}")
    if not drift >= 0:
        raise ValueError(f"drift (noise variance) must be >= 0, got {drift}")
    if not noise > 0:
        raise ValueError(f"noise (gradient-noise variance) must be > 0, got {noise}")


def lqg_momentum(
    curvature: float, control_cost: float, drift: float, noise: float, horizon: int
) -> LqgMomentum:
    """Closed-form momentum coefficients of the LQG rule with the first-step gain of an
    N-step horizon and the steady-state Kalman gain."""
    validate(curvature, control_cost, drift, noise)
    one = np.ones((1, 1))
    gains, _ = finite_horizon_lqr(one, one, curvature * one, control_cost * one, horizon)
    k = float(gains[0][0, 0])
    kalman, _ = stationary_kalman(one, curvature * one, drift * one, noise * one)
    ell = float(kalman[0, 0])
    return LqgMomentum(beta=(1 - ell * curvature) * (1 - k), lr=k * ell, k=k, kalman=ell)


def simulate_lqg(
    curvature: float,
    control_cost: float,
    drift: float,
    noise: float,
    horizon: int,
    steps: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Run the separated LQG controller (receding horizon N, steady Kalman filter) for `steps`
    steps from x_0 ~ N(0, 1); returns the updates u_t and the observed gradients y_t."""
    rule = lqg_momentum(curvature, control_cost, drift, noise, horizon)
    rng = np.random.default_rng(seed)
    x, prior_mean = rng.standard_normal(), 0.0
    updates, grads = np.empty(steps), np.empty(steps)
    for t in range(steps):
        y = curvature * x + np.sqrt(noise) * rng.standard_normal()
        estimate = prior_mean + rule.kalman * (y - curvature * prior_mean)
        u = -rule.k * estimate
        updates[t], grads[t] = u, y
        prior_mean = estimate + u
        x = x + u + np.sqrt(drift) * rng.standard_normal()
    return updates, grads
