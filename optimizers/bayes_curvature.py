"""BayesCurvature: an Adam-like rule derived from online Bayesian inference of the curvature.

Derivation (ours; see docs/learning_rules.md, after Vastola, Gershman and Rajan 2025, "Gradient
Descent as Loss Landscape Navigation"). Per coordinate the loss is ½ h (θ - θ*)²; the agent does
not know the curvature h nor θ*, and believes the distance to the optimum is x = θ - θ* ~ N(0, s²).
The gradient g = h x is then N(0, τ) with τ = h² s², so each gradient is one observation of τ.
With a Gamma(a, b) belief on the precision 1/τ (conjugate), exponential forgetting β₂ for a
drifting landscape (a power prior) gives

    a_t = β₂ a_{t-1} + ½,   b_t = β₂ b_{t-1} + ½ g_t²,
    E[h] = E[√τ] / s = √b_t Γ(a_t - ½) / (s Γ(a_t)).

The one-step-horizon optimal update under this belief, argmin_u E[½ h (x + u)²] with x = g / h,
is u = -g / E[h]:

    θ ← θ - s · m_t · Γ(a_t) / (Γ(a_t - ½) √b_t)

with m_t the bias-corrected EMA of gradients (β₁; the steady-state Kalman estimate of the
gradient under noisy observations, as heavy-ball momentum comes out of the LQG solution).
For large a_t, Γ(a_t)/Γ(a_t - ½) ≈ √(a_t - ¾) ≈ √a_t and b_t / a_t is Adam's bias-corrected
v̂_t, so the rule tends to Adam with lr = s. Early on it differs: with prior_shape 0 the first
step is zero (one gradient leaves E[√τ] infinite) and later steps grow with the count a_t (a
built-in warm-up); prior_rate b₀ plays the role of Adam's eps (inside the square root).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer, ParamsT

from optiforge.optimizers.contract import LoopNeeds
from optiforge.optimizers.validation import require_in_range, require_non_negative, require_positive


def gamma_ratio(shape: float) -> float:
    """Γ(a) / Γ(a - ½), so that E[τ^{½}] = √b / gamma_ratio(a) under Gamma(a, b) on 1/τ; it is 0
    for a <= ½, where that expectation is infinite (the Bayes step is then zero)."""
    if shape <= 0.5:
        return 0.0
    return math.exp(math.lgamma(shape) - math.lgamma(shape - 0.5))


class BayesCurvature(Optimizer):
    """Adam-like steps -s m / E[h] with E[h] from a Gamma posterior on the gradient precision.

    `step(closure=None)` follows torch's contract: the closure (optional) re-evaluates the loss
    with gradients and its loss is returned. Parameters whose `.grad` is None are skipped.
    State per parameter: `step`, `shape` (a_t, a float), `exp_avg` (m_t), `rate` (b_t).

    Args:
        params: parameters or parameter groups (per group: every argument below).
        lr: s > 0, the prior scale of the distance to the optimum (Adam's lr in the limit).
        beta1: EMA factor of the gradient (momentum), in [0, 1).
        beta2: forgetting factor of the curvature belief, in (0, 1).
        prior_shape: a₀ >= 0, prior pseudo-count of the precision belief.
        prior_rate: b₀ > 0, prior rate (keeps √b_t > 0, like Adam's eps).
        weight_decay: decoupled weight decay (AdamW's form), >= 0.
    """

    loop_needs = LoopNeeds()  # one gradient per step, closure optional

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        prior_shape: float = 0.0,
        prior_rate: float = 1e-16,
        weight_decay: float = 0.0,
    ) -> None:
        defaults = {
            "lr": lr,
            "beta1": beta1,
            "beta2": beta2,
            "prior_shape": prior_shape,
            "prior_rate": prior_rate,
            "weight_decay": weight_decay,
        }
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group and validate its hyperparameters (defaults and per-group overrides)."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        require_positive("lr", group["lr"])
        require_in_range("beta1", group["beta1"], 0.0, 1.0, high_open=True)
        require_in_range("beta2", group["beta2"], 0.0, 1.0, low_open=True, high_open=True)
        require_non_negative("prior_shape", group["prior_shape"])
        require_positive("prior_rate", group["prior_rate"])
        require_non_negative("weight_decay", group["weight_decay"])

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One update of every parameter with a gradient; returns the closure's loss, if any."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["beta1"], group["beta2"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["shape"] = float(group["prior_shape"])
                    state["exp_avg"] = torch.zeros_like(p)
                    state["rate"] = torch.full_like(p, group["prior_rate"])
                state["step"] += 1
                state["shape"] = beta2 * state["shape"] + 0.5
                state["exp_avg"].lerp_(p.grad, 1.0 - beta1)
                state["rate"].mul_(beta2).addcmul_(p.grad, p.grad, value=0.5)
                momentum = state["exp_avg"] / (1.0 - beta1 ** state["step"])
                if group["weight_decay"] > 0:
                    p.mul_(1.0 - group["lr"] * group["weight_decay"])
                scale = group["lr"] * gamma_ratio(state["shape"])
                p.addcdiv_(momentum, state["rate"].sqrt(), value=-scale)
        return loss
