"""Teacher-student regression under S_n: permutation representations, tied (equivariant) and free
dense layers, and the two-layer network that is both the data's teacher and the student's shape."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.problems.equivariant.permutation_linear import PermutationLinear
    from optiforge.problems.equivariant.permutation_mlp import PermutationMLP
    from optiforge.problems.equivariant.permutation_rep import PermutationRep

__all__ = ["PermutationLinear", "PermutationMLP", "PermutationRep"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.problems.equivariant.permutation_linear": ("PermutationLinear",),
        "optiforge.problems.equivariant.permutation_mlp": ("PermutationMLP",),
        "optiforge.problems.equivariant.permutation_rep": ("PermutationRep",),
    },
)
