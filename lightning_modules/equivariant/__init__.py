"""Equivariant MLPs as subspaces of MLPs: the regressor, hidden-representation distances and
loss-landscape measurements. The layers (permutation representations of S_n, tied layers, the
Reynolds projection) live in `optiforge.problems.equivariant`, shared with the teacher's data; they
are re-exported here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.equivariant.module import EquivariantRegressor
    from optiforge.problems.equivariant.permutation_linear import PermutationLinear
    from optiforge.problems.equivariant.permutation_mlp import PermutationMLP
    from optiforge.problems.equivariant.permutation_rep import PermutationRep

__all__ = ["EquivariantRegressor", "PermutationLinear", "PermutationMLP", "PermutationRep"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.equivariant.module": ("EquivariantRegressor",),
        "optiforge.problems.equivariant.permutation_linear": ("PermutationLinear",),
        "optiforge.problems.equivariant.permutation_mlp": ("PermutationMLP",),
        "optiforge.problems.equivariant.permutation_rep": ("PermutationRep",),
    },
)
