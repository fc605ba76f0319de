"""Equivariant MLPs as subspaces of MLPs: the regressor, hidden-representation distances and
loss-landscape measurements. The layers (permutation representations of S_n, tied layers, the
Reynolds projection) live in `problems.equivariant`, shared with the teacher's data; they are
re-exported here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from lightning_modules.equivariant.module import EquivariantRegressor
    from problems.equivariant.permutation_linear import PermutationLinear
    from problems.equivariant.permutation_mlp import PermutationMLP
    from problems.equivariant.permutation_rep import PermutationRep

__all__ = ["EquivariantRegressor", "PermutationLinear", "PermutationMLP", "PermutationRep"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "lightning_modules.equivariant.module": ("EquivariantRegressor",),
        "problems.equivariant.permutation_linear": ("PermutationLinear",),
        "problems.equivariant.permutation_mlp": ("PermutationMLP",),
        "problems.equivariant.permutation_rep": ("PermutationRep",),
    },
)
