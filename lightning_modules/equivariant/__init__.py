"""Equivariant MLPs as subspaces of MLPs: permutation representations of S_n, tied layers,
Reynolds projection, hidden-representation distances and loss-landscape measurements."""

from lightning_modules.equivariant.module import EquivariantRegressor
from lightning_modules.equivariant.permutation_linear import PermutationLinear
from lightning_modules.equivariant.permutation_mlp import PermutationMLP
from lightning_modules.equivariant.permutation_rep import PermutationRep

__all__ = ["EquivariantRegressor", "PermutationLinear", "PermutationMLP", "PermutationRep"]
