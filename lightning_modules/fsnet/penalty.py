"""Penalty-network baseline: the predictor alone, trained on f + weighted squared violations.

Loss f(y) + eq_weight ||h(y)||^2 + ineq_weight ||relu(g(y))||^2 (FSNet's baseline weights
50 / 50), no correction at inference: it shows what the feasibility step buys.
"""

from __future__ import annotations

from torch import Tensor

from optiforge.lightning_modules.fsnet.solver_module import (
    DEFAULT_SPEEDUP_MAX_GAP,
    ConstrainedSolverModule,
)
from optiforge.problems.constrained import DEFAULT_PROBLEM, ProblemSpec


class PenaltyNet(ConstrainedSolverModule):
    """Args:
    problem, hidden_sizes, report_tolerance, speedup_max_gap: see `ConstrainedSolverModule`.
    eq_weight, ineq_weight: penalty weights (>= 0).
    """

    def __init__(
        self,
        problem: ProblemSpec = DEFAULT_PROBLEM,
        hidden_sizes: tuple[int, ...] = (1024, 1024, 1024, 1024),
        eq_weight: float = 50.0,
        ineq_weight: float = 50.0,
        report_tolerance: float = 1e-5,
        speedup_max_gap: float = DEFAULT_SPEEDUP_MAX_GAP,
    ) -> None:
        super().__init__(problem, hidden_sizes, report_tolerance, speedup_max_gap=speedup_max_gap)
        for field, value in (("eq_weight", eq_weight), ("ineq_weight", ineq_weight)):
            if value < 0:
                raise ValueError(f"{field} must be >= 0, got {value}")
        self.save_hyperparameters()

    def training_loss(self, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        y = self.predictor(x)
        objective, eq, ineq = self.objective_and_penalties(y, x)
        loss = objective + self.hparams.eq_weight * eq + self.hparams.ineq_weight * ineq
        return loss, {"objective": objective.detach(), "eq": eq.detach(), "ineq": ineq.detach()}

    def solve(self, x: Tensor) -> Tensor:
        return self.predictor(x)
