"""QCQP families: 0.5 y^T H_i y + G_i^T psi(y; x) <= h_i with diagonal H_i >= 0 (FSNet recipe).

Draws after Q, p, A (FSNet recipe): G ~ U[-1, 1] [k, n], then the diagonals of H_i ~ U[0, 0.1]
[k, n] (FSNet's H; the 0.5 factor is FSNet's too). H_i is PSD, so the convex family is a convex
QCQP; the nonconvex and nonsmooth ones get their nonconvexity from psi (see `family.py`).

h_i = sum_k |(G A^+)_ik| + 0.5 m lambda_max((A^+)^T H_i A^+). At y0 = A^+ x with x in [-1, 1]^m
the linear term is at most the first sum, and y0^T H_i y0 = x^T (A^+)^T H_i A^+ x is at most
lambda_max ||x||^2 <= lambda_max m, so y0 is feasible for every x in the box.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from optiforge.problems.constrained.family import ConstrainedFamily
from optiforge.problems.constrained.generation import (
    as_tensor,
    box_bound,
    box_norm_bound,
    family_rng,
    linear_bound,
    objective_and_equalities,
)

H_DIAGONAL_HIGH = 0.1


@dataclass(frozen=True, eq=False)
class QuadraticInequalityFamily(ConstrainedFamily):
    """min f(y) s.t. A y = x, 0.5 y^T diag(H_diag_i) y + G_i psi(y; x) <= h_i, i = 1..k."""

    G: Tensor
    H_diag: Tensor
    h: Tensor

    @property
    def num_ineq(self) -> int:
        """Number of quadratic inequalities k."""
        return self.G.shape[0]

    def _problem_ineq(self, y: Tensor, x: Tensor) -> Tensor:
        """0.5 (y * y) H_diag^T + G psi(y; x) - h [B, k]."""
        curvature = 0.5 * y.square() @ self.H_diag.T
        return curvature + self._constraint_argument(y, x) @ self.G.T - self.h

    def _problem_ineq_jacobian(self, y: Tensor, x: Tensor) -> Tensor:
        """diag(H_diag_i) y + G_i diag(psi'(y)) per row i [B, k, n]."""
        return self.H_diag * y.unsqueeze(1) + self.G * self._constraint_argument_slope(y).unsqueeze(
            1
        )

    @classmethod
    def generate(
        cls,
        name: str,
        *,
        num_vars: int,
        num_eq: int,
        num_ineq: int,
        seed: int,
        objective_kind: str,
        sine_constraints: bool,
    ) -> QuadraticInequalityFamily:
        """Draw a family from `seed` with FSNet's distributions (module docstring)."""
        rng = family_rng(seed)
        shared = objective_and_equalities(rng, "fsnet", num_vars, num_eq)
        G = as_tensor(rng.uniform(-1.0, 1.0, size=(num_ineq, num_vars)))
        H_diag = as_tensor(rng.uniform(0.0, H_DIAGONAL_HIGH, size=(num_ineq, num_vars)))
        A_pinv = shared["A_pinv"]
        curvature = A_pinv.T.unsqueeze(0) * H_diag.unsqueeze(1) @ A_pinv  # [k, m, m]
        largest_eigenvalue = torch.linalg.eigvalsh(curvature)[:, -1].clamp_min(0.0)
        quadratic_bound = 0.5 * largest_eigenvalue * box_norm_bound(num_eq) ** 2
        return cls(
            name=name,
            objective_kind=objective_kind,
            sine_constraints=sine_constraints,
            box_bound=box_bound("fsnet"),
            seed=seed,
            G=G,
            H_diag=H_diag,
            h=linear_bound(G, A_pinv) + quadratic_bound,
            **shared,
        )
