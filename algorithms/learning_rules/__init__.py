"""Learning rules derived as optimal control of a partially observed quadratic loss landscape
(after Vastola, Gershman and Rajan 2025): Riccati / Kalman solutions, and the gradient-descent,
momentum, natural-gradient and Bayesian adaptive rules that come out of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.learning_rules.bayes_curvature import CurvatureBelief, infer_curvature
    from optiforge.algorithms.learning_rules.horizon_search import (
        optimal_linear_rule,
        polyak_heavy_ball,
    )
    from optiforge.algorithms.learning_rules.lqg_momentum import (
        LqgMomentum,
        lqg_momentum,
        simulate_lqg,
    )
    from optiforge.algorithms.learning_rules.one_step import one_step_preconditioner
    from optiforge.algorithms.learning_rules.riccati import (
        finite_horizon_lqr,
        stationary_kalman,
        stationary_lqr,
    )

__all__ = [
    "CurvatureBelief",
    "LqgMomentum",
    "finite_horizon_lqr",
    "infer_curvature",
    "lqg_momentum",
    "one_step_preconditioner",
    "optimal_linear_rule",
    "polyak_heavy_ball",
    "simulate_lqg",
    "stationary_kalman",
    "stationary_lqr",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.learning_rules.bayes_curvature": (
            "CurvatureBelief",
            "infer_curvature",
        ),
        "optiforge.algorithms.learning_rules.horizon_search": (
            "optimal_linear_rule",
            "polyak_heavy_ball",
        ),
        "optiforge.algorithms.learning_rules.lqg_momentum": (
            "LqgMomentum",
            "lqg_momentum",
            "simulate_lqg",
        ),
        "optiforge.algorithms.learning_rules.one_step": ("one_step_preconditioner",),
        "optiforge.algorithms.learning_rules.riccati": (
            "finite_horizon_lqr",
            "stationary_kalman",
            "stationary_lqr",
        ),
    },
)
