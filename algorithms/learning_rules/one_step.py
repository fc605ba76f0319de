"""Gradient descent and natural gradient as the one-step-horizon LQR rule.

With state x = θ - θ* on L(θ) = ½ xᵀ H x, update u (A = B = I), horizon 1 and control cost
½ uᵀ R u with R = G / η (G: the metric of parameter space, η: how cheap movement is), the
Riccati solution is K_0 = (R + H)⁻¹ H, i.e. u = -K_0 x = -(H + G/η)⁻¹ g with g = H x the
gradient. So the rule is a preconditioned gradient step u = -M g with M = (H + G/η)⁻¹:
- G = I, H = h I: gradient descent with step 1/(h + 1/η); η → ∞ gives 1/h, the optimal step;
- η → 0: M = η G⁻¹ + O(η²), the natural gradient step in the metric G (plain GD for G = I).
"""

from __future__ import annotations

import numpy as np

from optiforge.algorithms.learning_rules.riccati import Matrix, finite_horizon_lqr, require_psd


def one_step_preconditioner(hessian: Matrix, metric: Matrix, eta: float) -> Matrix:
    """M with u = -M g for the one-step LQR problem; `eta` = inf drops the control cost."""
    if not eta > 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    require_psd("hessian", hessian, strict=True)
    require_psd("metric", metric, strict=True)
    eye = np.eye(hessian.shape[0])
    control_cost = np.zeros_like(metric) if np.isinf(eta) else metric / eta
    (gain,), _ = finite_horizon_lqr(eye, eye, hessian, control_cost, 1)
    return gain @ np.linalg.inv(hessian)


def optimal_gd_step(hessian: Matrix, gradient: Matrix) -> float:
    """Exact line-search step of gradient descent on ½ xᵀ H x: gᵀg / gᵀ H g."""
    return float(gradient @ gradient / (gradient @ hessian @ gradient))
