"""FSNet (Nguyen & Donti 2025): a predictor followed by a differentiable feasibility step.

The network predicts y_theta = N(x); the feasibility step (`FeasibilitySeeker`: batched L-BFGS
on ||h||^2 + ||relu(g)||^2, first `unrolled_iter` iterations differentiated, the rest
straight-through) turns it into y_hat. Training minimizes, label-free,

    f(y_hat) + distance_weight * ||y_hat - y_theta||^2
      (+ violation_weight * mean violation of y_theta while that mean is >= violation_threshold)

so the network learns to predict points the solver needs few iterations to repair and whose
repair is good for the objective. The solver's stop tolerance (on each instance's squared
violation) starts at `tolerance` and is multiplied by `tolerance_decay` every `tolerance_every`
epochs (FSNet: 1e-7, x0.1 every 100 epochs); evaluation uses `test_tolerance` (1e-12; FSNet's
1e-9 applies to its scaled batch mean; on one instance's squared violation 1e-9 leaves single
residuals near 3e-5, above the 1e-5 target, while 1e-12 gives ~1e-6 within 50 iterations).
Defaults are FSNet's (configs/default.yaml of the official code), except the network, which the
configs size for the CPU.
"""

from __future__ import annotations

from torch import Tensor

from optiforge.lightning_modules.fsnet.feasibility import FeasibilitySeeker
from optiforge.lightning_modules.fsnet.solver_module import (
    DEFAULT_SPEEDUP_MAX_GAP,
    ConstrainedSolverModule,
)
from optiforge.problems.constrained import DEFAULT_PROBLEM, ProblemSpec


class FSNet(ConstrainedSolverModule):
    """Args:
    problem, hidden_sizes, report_tolerance, speedup_max_gap: see `ConstrainedSolverModule`.
    distance_weight: lambda of the distance term (FSNet: 5).
    max_iter, unrolled_iter, memory, scale: the feasibility step (FSNet: 50, 30, 30, 1000).
    tolerance, tolerance_decay, tolerance_every, test_tolerance: the stop tolerance schedule.
    test_max_iter: iterations at evaluation (FSNet evaluates with the training budget).
    test_memory: curvature pairs at evaluation (None: `memory`). Fewer pairs make each
        iteration cheaper (the two-loop recursion is most of an iteration's time on CPU) at the
        cost of a few more iterations; the trained network does not change.
    violation_weight, violation_threshold: FSNet's guard for wild early predictions (10, 1e3).
    """

    def __init__(
        self,
        problem: ProblemSpec = DEFAULT_PROBLEM,
        hidden_sizes: tuple[int, ...] = (1024, 1024, 1024, 1024),
        distance_weight: float = 5.0,
        max_iter: int = 50,
        unrolled_iter: int = 30,
        memory: int = 30,
        scale: float = 1000.0,
        tolerance: float = 1e-7,
        tolerance_decay: float = 0.1,
        tolerance_every: int = 100,
        test_tolerance: float = 1e-12,
        test_max_iter: int = 50,
        test_memory: int | None = None,
        violation_weight: float = 10.0,
        violation_threshold: float = 1e3,
        report_tolerance: float = 1e-5,
        speedup_max_gap: float = DEFAULT_SPEEDUP_MAX_GAP,
    ) -> None:
        super().__init__(problem, hidden_sizes, report_tolerance, speedup_max_gap=speedup_max_gap)
        checks = {
            "distance_weight": distance_weight >= 0,
            "tolerance_decay": 0 < tolerance_decay <= 1,
            "tolerance_every": tolerance_every >= 1,
            "violation_weight": violation_weight >= 0,
            "test_tolerance": test_tolerance >= 0,
            "test_memory": test_memory is None or test_memory >= 1,
        }
        for field, ok in checks.items():
            if not ok:
                raise ValueError(
                    f"{field} has an invalid value {locals()[field]!r} (allowed: "
                    "distance_weight, violation_weight, test_tolerance >= 0; "
                    "0 < tolerance_decay <= 1; tolerance_every >= 1; test_memory None or >= 1)"
                )
        self.save_hyperparameters()
        self.seeker = FeasibilitySeeker(
            max_iter=max_iter,
            unrolled_iter=unrolled_iter,
            memory=memory,
            scale=scale,
            tolerance=tolerance,
        )
        self.test_seeker = FeasibilitySeeker(
            max_iter=test_max_iter,
            unrolled_iter=0,
            memory=memory if test_memory is None else test_memory,
            scale=scale,
            tolerance=test_tolerance,
        )

    def current_tolerance(self) -> float:
        """The training stop tolerance at the current epoch."""
        hp = self.hparams
        return hp.tolerance * hp.tolerance_decay ** (self.current_epoch // hp.tolerance_every)

    def training_loss(self, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        predicted = self.predictor(x)
        result = self.seeker(self.family.squared_violation, predicted, x, self.current_tolerance())
        objective = self.family.objective(result.y, x).mean()
        distance = (result.y - predicted).square().sum(dim=-1).mean()
        loss = objective + self.hparams.distance_weight * distance
        predicted_violation = self.family.squared_violation(predicted, x).mean()
        if predicted_violation.detach() >= self.hparams.violation_threshold:
            loss = loss + self.hparams.violation_weight * predicted_violation
        extras = {
            "objective": objective.detach(),
            "distance": distance.detach(),
            "predicted_violation": predicted_violation.detach(),
            "corrected_violation": result.violation.mean(),
            "solver_iterations": float(result.iterations),
        }
        return loss, extras

    def solve(self, x: Tensor) -> Tensor:
        predicted = self.predictor(x)
        return self.test_seeker(self.family.squared_violation, predicted, x).y
