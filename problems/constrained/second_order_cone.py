"""SOCP families: ||G_i psi(y; x) + h_i||_2 <= c_i^T y + d_i, i = 1..k (FSNet recipe).

Draws after Q, p, A: G ~ U[-1, 1] [k, k, n] (cone i has G_i [k, n]: like FSNet, every cone has
as many rows as there are cones), h ~ U[-1, 1] [k, k], c ~ U[-1, 1] [k, n].

FSNet sets d_i so that one random point sits on every cone's boundary, which does not make
A^+ x feasible. Here d_i = ||h_i|| + sqrt(m) ||G_i A^+||_2 + ||(A^+)^T c_i||_1 + margin: for
y0 = A^+ x with x in [-1, 1]^m, ||G_i y0 + h_i|| <= ||h_i|| + ||G_i A^+||_2 ||x||_2 and
c_i^T y0 >= -||(A^+)^T c_i||_1, so every cone holds at y0 with slack at least `SOC_MARGIN`
(strictly feasible). With sine constraints psi(y0; x) = y0 and the same bound holds.
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
    objective_and_equalities,
)

SOC_MARGIN = 0.01


@dataclass(frozen=True, eq=False)
class SecondOrderConeFamily(ConstrainedFamily):
    """min f(y) s.t. A y = x, ||G_i psi(y; x) + h_i||_2 - c_i^T y - d_i <= 0, i = 1..k."""

    G: Tensor
    h: Tensor
    c: Tensor
    d: Tensor

    @property
    def num_ineq(self) -> int:
        """Number of cone constraints k."""
        return self.G.shape[0]

    def _problem_ineq(self, y: Tensor, x: Tensor) -> Tensor:
        """||G_i psi + h_i|| - (c_i^T y + d_i) [B, k]."""
        cone_vectors = torch.einsum("irn,bn->bir", self.G, self._constraint_argument(y, x))
        cone_norms = torch.linalg.vector_norm(cone_vectors + self.h, dim=-1)
        return cone_norms - (y @ self.c.T + self.d)

    def _problem_ineq_jacobian(self, y: Tensor, x: Tensor) -> Tensor:
        """u_i^T G_i diag(psi'(y)) - c_i^T with u_i the unit cone vector [B, k, n].

        Where a cone vector is zero the norm has no gradient; u_i = 0 there (a subgradient).
        """
        argument = self._constraint_argument(y, x)
        cone_vectors = torch.einsum("irn,bn->bir", self.G, argument) + self.h
        cone_norms = torch.linalg.vector_norm(cone_vectors, dim=-1, keepdim=True)
        units = cone_vectors / torch.where(cone_norms > 0, cone_norms, torch.ones_like(cone_norms))
        slope = self._constraint_argument_slope(y).unsqueeze(1)
        return torch.einsum("bir,irn->bin", units, self.G) * slope - self.c

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
    ) -> SecondOrderConeFamily:
        """Draw a family from `seed` with FSNet's distributions (module docstring)."""
        rng = family_rng(seed)
        shared = objective_and_equalities(rng, "fsnet", num_vars, num_eq)
        G = as_tensor(rng.uniform(-1.0, 1.0, size=(num_ineq, num_ineq, num_vars)))
        h = as_tensor(rng.uniform(-1.0, 1.0, size=(num_ineq, num_ineq)))
        c = as_tensor(rng.uniform(-1.0, 1.0, size=(num_ineq, num_vars)))
        A_pinv = shared["A_pinv"]
        cone_reach = torch.linalg.matrix_norm(G @ A_pinv, ord=2) * box_norm_bound(num_eq)
        linear_reach = (c @ A_pinv).abs().sum(dim=-1)
        d = torch.linalg.vector_norm(h, dim=-1) + cone_reach + linear_reach + SOC_MARGIN
        return cls(
            name=name,
            objective_kind=objective_kind,
            sine_constraints=sine_constraints,
            box_bound=box_bound("fsnet"),
            seed=seed,
            G=G,
            h=h,
            c=c,
            d=d,
            **shared,
        )
