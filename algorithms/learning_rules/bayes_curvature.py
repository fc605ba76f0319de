"""Adam-like adaptivity from online Bayesian inference of per-coordinate curvature.

Belief model (ours): per coordinate L = ½ h x², x ~ N(0, s²) unknown (the prior scale s of the
distance to the optimum), so the gradient g = h x ~ N(0, τ), τ = h² s². A Gamma(a, b) belief on
the precision 1/τ is conjugate; forgetting β₂ (a drifting landscape) gives a_t = β₂ a_{t-1} + ½,
b_t = β₂ b_{t-1} + ½ g_t², and E[h] = E[√τ] / s = √b_t Γ(a_t - ½) / (s Γ(a_t)). The one-step
Bayes update is u = -g / E[h] (the rule `optiforge.optimizers.BayesCurvature` implements); Adam's is
u = -s g / √v̂_t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import poch


@dataclass(frozen=True)
class CurvatureBelief:
    """Per-step posterior means of h (`mean_curvature`, shape [steps, d]) and Adam's
    s / √v̂_t counterpart expressed as a curvature (`adam_curvature`, same shape)."""

    mean_curvature: np.ndarray
    adam_curvature: np.ndarray


def infer_curvature(
    grads: np.ndarray,
    scale: float,
    beta2: float = 0.999,
    prior_shape: float = 0.0,
    prior_rate: float = 1e-16,
) -> CurvatureBelief:
    """Filter the gradients `grads` [steps, d] into E[h] per step; also Adam's √v̂_t / s."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    if not 0 < beta2 < 1:
        raise ValueError(f"beta2 must be in (0, 1), got {beta2}")
    if not prior_shape >= 0:
        raise ValueError(f"prior_shape must be >= 0, got {prior_shape}")
    if not prior_rate > 0:
        raise ValueError(f"prior_rate must be > 0, got {prior_rate}")
    shape, rate = prior_shape, np.full(grads.shape[1], prior_rate)
    second_moment = np.zeros(grads.shape[1])
    mean, adam = np.empty_like(grads), np.empty_like(grads)
    for t, g in enumerate(grads):
        shape = beta2 * shape + 0.5
        rate = beta2 * rate + 0.5 * g**2
        # Γ(a) / Γ(a - ½) = poch(a - ½, ½); E[√τ] is infinite for a <= ½ (no step)
        ratio = poch(shape - 0.5, 0.5) if shape > 0.5 else 0.0
        mean[t] = np.inf if ratio == 0 else np.sqrt(rate) / (ratio * scale)
        second_moment = beta2 * second_moment + (1 - beta2) * g**2
        adam[t] = np.sqrt(second_moment / (1 - beta2 ** (t + 1))) / scale
    return CurvatureBelief(mean_curvature=mean, adam_curvature=adam)
