"""DC3 baseline (Donti, Rolnick & Kolter 2021) in FSNet's code path.

The network predicts the n - m independent variables z; equality completion solves A y = x
for the rest (exact equalities); inequality correction takes gradient steps on
||relu(g(complete(z)))||^2 with respect to z, unrolled while training. Loss, label-free as in
DC3: f(y) + soft_weight * ((1 - eq_fraction) ||relu(g(y))||^2 + eq_fraction ||h(y)||^2)
(DC3's defaults 10 and 0.5; h is zero up to rounding after completion). The correction step
defaults to 1e-3, not DC3's 1e-7: on the FSNet convex QP (100/50/50) 10 steps of 1e-7 leave
the mean max inequality violation of random completions at 16.0 (unchanged), 1e-3 brings it
to 0.67 (50 steps: 4e-3), and 1e-2 diverges.
"""

from __future__ import annotations

from torch import Tensor

from optiforge.lightning_modules.fsnet.dc3 import EqualityCompletion, InequalityCorrection
from optiforge.lightning_modules.fsnet.solver_module import (
    DEFAULT_SPEEDUP_MAX_GAP,
    ConstrainedSolverModule,
)
from optiforge.problems.constrained import DEFAULT_PROBLEM, ProblemSpec


class DC3(ConstrainedSolverModule):
    """Args:
    problem, hidden_sizes, report_tolerance, speedup_max_gap: see `ConstrainedSolverModule`.
    soft_weight, eq_fraction: the soft-loss weights (>= 0; eq_fraction in [0, 1]).
    correction_steps_train / correction_steps_test, correction_lr, correction_momentum: the
        inequality correction (`InequalityCorrection`).
    """

    def __init__(
        self,
        problem: ProblemSpec = DEFAULT_PROBLEM,
        hidden_sizes: tuple[int, ...] = (200, 200),
        soft_weight: float = 10.0,
        eq_fraction: float = 0.5,
        correction_steps_train: int = 10,
        correction_steps_test: int = 10,
        correction_lr: float = 1e-3,
        correction_momentum: float = 0.5,
        report_tolerance: float = 1e-5,
        speedup_max_gap: float = DEFAULT_SPEEDUP_MAX_GAP,
    ) -> None:
        family = problem.build()
        super().__init__(
            problem,
            hidden_sizes,
            report_tolerance,
            output_size=family.num_vars - family.num_eq,
            speedup_max_gap=speedup_max_gap,
        )
        if soft_weight < 0:
            raise ValueError(f"soft_weight must be >= 0, got {soft_weight}")
        if not 0 <= eq_fraction <= 1:
            raise ValueError(f"eq_fraction must be in [0, 1], got {eq_fraction}")
        self.save_hyperparameters()
        self.completion = EqualityCompletion(self.family.A)
        self.correction = InequalityCorrection(
            steps_train=correction_steps_train,
            steps_test=correction_steps_test,
            lr=correction_lr,
            momentum=correction_momentum,
        )

    def on_fit_start(self) -> None:
        super().on_fit_start()
        self.completion = self.completion.to(self.device)

    on_validation_start = on_test_start = on_fit_start

    def corrected(self, x: Tensor, training: bool) -> Tensor:
        """Complete the predicted independent variables, then correct the inequalities."""
        y = self.completion.complete(self.predictor(x), x)
        return self.correction(self.family, self.completion, y, x, training)

    def training_loss(self, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        y = self.corrected(x, training=True)
        objective, eq, ineq = self.objective_and_penalties(y, x)
        fraction = self.hparams.eq_fraction
        loss = objective + self.hparams.soft_weight * ((1 - fraction) * ineq + fraction * eq)
        return loss, {"objective": objective.detach(), "eq": eq.detach(), "ineq": ineq.detach()}

    def solve(self, x: Tensor) -> Tensor:
        return self.corrected(x, training=False)
