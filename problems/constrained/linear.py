"""QP-type families: linear inequalities G psi(y; x) <= h (FSNet's and DC3's QPs).

G ~ U[-1, 1] (FSNet) or N(0, 1) (DC3), [num_ineq, num_vars], drawn after Q, p, A;
h = sum_k |(G A^+)_ik|. For x in [-1, 1]^m, G A^+ x <= h (the max of a linear function over
the box is the sum of absolute coefficients), so y0 = A^+ x is feasible; with sine constraints
psi(y0; x) = y0 and the same argument holds (see `family.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from optiforge.problems.constrained.family import ConstrainedFamily
from optiforge.problems.constrained.generation import (
    Recipe,
    as_tensor,
    box_bound,
    family_rng,
    linear_bound,
    objective_and_equalities,
)


@dataclass(frozen=True, eq=False)
class LinearInequalityFamily(ConstrainedFamily):
    """min f(y) s.t. A y = x, G psi(y; x) <= h; G [k, n], h [k]."""

    G: Tensor
    h: Tensor

    @property
    def num_ineq(self) -> int:
        """Number of linear inequalities k."""
        return self.G.shape[0]

    def _problem_ineq(self, y: Tensor, x: Tensor) -> Tensor:
        """G psi(y; x) - h [B, k]."""
        return self._constraint_argument(y, x) @ self.G.T - self.h

    def _problem_ineq_jacobian(self, y: Tensor, x: Tensor) -> Tensor:
        """G diag(psi'(y)) [B, k, n]."""
        return self.G * self._constraint_argument_slope(y).unsqueeze(1)

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
        recipe: Recipe,
    ) -> LinearInequalityFamily:
        """Draw a family from `seed` with the `recipe` distributions (module docstring)."""
        rng = family_rng(seed)
        shared = objective_and_equalities(rng, recipe, num_vars, num_eq)
        if recipe == "fsnet":
            G = as_tensor(rng.uniform(-1.0, 1.0, size=(num_ineq, num_vars)))
        else:
            G = as_tensor(rng.standard_normal(size=(num_ineq, num_vars)))
        return cls(
            name=name,
            objective_kind=objective_kind,
            sine_constraints=sine_constraints,
            box_bound=box_bound(recipe),
            seed=seed,
            G=G,
            h=linear_bound(G, shared["A_pinv"]),
            **shared,
        )
