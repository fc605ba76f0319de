"""Projection baseline: the penalty network's prediction projected onto the feasible set.

At evaluation each prediction y_theta is replaced by argmin ||y - y_theta||^2 over the feasible
set, solved exactly by cvxpy (Clarabel), one instance after another; training is the penalty
network's. Convex families only (their feasible set is convex, so the projection is unique and
the solver exact); it is the exact-solver counterpart of FSNet's learned feasibility step, and
its cost per instance is that of a QP/QCQP/SOCP solve.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from optiforge.lightning_modules.fsnet.penalty import PenaltyNet
from optiforge.lightning_modules.fsnet.solver_module import DEFAULT_SPEEDUP_MAX_GAP
from optiforge.problems.constrained import DEFAULT_PROBLEM, ProblemSpec, cvxpy_feasible_set


class ProjectionNet(PenaltyNet):
    """Args: as `PenaltyNet`; `problem` must name a convex family."""

    def __init__(
        self,
        problem: ProblemSpec = DEFAULT_PROBLEM,
        hidden_sizes: tuple[int, ...] = (1024, 1024, 1024, 1024),
        eq_weight: float = 50.0,
        ineq_weight: float = 50.0,
        report_tolerance: float = 1e-5,
        speedup_max_gap: float = DEFAULT_SPEEDUP_MAX_GAP,
    ) -> None:
        super().__init__(
            problem, hidden_sizes, eq_weight, ineq_weight, report_tolerance, speedup_max_gap
        )
        if not self.family.is_convex:
            raise ValueError(
                f"problem.name {problem.name!r} is not convex; ProjectionNet needs a convex "
                "family (convex_qp, convex_qcqp, convex_socp, dc3_convex_qp)"
            )
        import cvxpy as cp

        self._point = cp.Variable(self.family.num_vars)
        self._target = cp.Parameter(self.family.num_vars)
        self._instance_parameters = cp.Parameter(self.family.num_eq)
        self._projection = cp.Problem(
            cp.Minimize(cp.sum_squares(self._point - self._target)),
            cvxpy_feasible_set(self.family, self._point, self._instance_parameters),
        )

    def solve(self, x: Tensor) -> Tensor:
        """Project every prediction; an instance the solver fails on raises (never reported)."""
        predicted = self.predictor(x).detach().cpu().numpy()
        parameters = x.cpu().numpy()
        projected = np.empty_like(predicted)
        for row, (target, values) in enumerate(zip(predicted, parameters, strict=True)):
            self._target.value, self._instance_parameters.value = target, values
            self._projection.solve(solver="CLARABEL")
            if self._projection.status != "optimal":
                raise RuntimeError(
                    f"projection of instance {row} failed: {self._projection.status}"
                )
            projected[row] = self._point.value
        return torch.from_numpy(projected).to(x)
