"""Two-layer ReLU network between permutation representations: in -> hidden -> out.

Tied, it is an S_n-equivariant network (Deep-Sets style when the hidden layer is copies of the
set representation); free, it is the unconstrained MLP of the same shape, which contains the
tied one as a linear subspace. The hidden representation fixes which subspace that is: MLPs are
symmetric under permuting hidden neurons, and permuting a tied network's hidden neurons gives an
equivariant network for another (isomorphic or not) choice of hidden representation.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from optiforge.problems.equivariant.permutation_linear import PermutationLinear
from optiforge.problems.equivariant.permutation_rep import PermutationRep


class PermutationMLP(nn.Module):
    """x [batch, in dim] -> relu(W1 x + b1) -> W2 h + b2 [batch, out dim]."""

    def __init__(
        self,
        n: int,
        in_blocks: Sequence[str],
        hidden_blocks: Sequence[str],
        out_blocks: Sequence[str],
        tied: bool,
    ) -> None:
        super().__init__()
        self.in_rep = PermutationRep.of(n, in_blocks)
        self.hidden_rep = PermutationRep.of(n, hidden_blocks)
        self.out_rep = PermutationRep.of(n, out_blocks)
        self.hidden = PermutationLinear(self.in_rep, self.hidden_rep, tied)
        self.output = PermutationLinear(self.hidden_rep, self.out_rep, tied)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp_forward(x, self.dense_parameters())

    def dense_parameters(self) -> list[torch.Tensor]:
        """[W1, b1, W2, b2] as dense tensors (functions of the orbit values when tied)."""
        return [self.hidden.weight(), self.hidden.bias(), self.output.weight(), self.output.bias()]

    def squared_distance(self) -> torch.Tensor:
        """Squared distance of all dense parameters to the equivariant subspace."""
        return self.hidden.squared_distance() + self.output.squared_distance()

    def labels(self) -> list[tuple[torch.Tensor, int]]:
        """Orbit labels and counts of W1, b1, W2, b2 (same order as dense_parameters)."""
        return [
            (self.hidden.weight_labels, self.hidden.weight_orbits),
            (self.hidden.bias_labels, self.hidden.bias_orbits),
            (self.output.weight_labels, self.output.weight_orbits),
            (self.output.bias_labels, self.output.bias_orbits),
        ]

    @torch.no_grad()
    def copy_dense_from(self, other: PermutationMLP) -> None:
        """Put this free network exactly at `other`'s point (same shape)."""
        weight1, bias1, weight2, bias2 = other.dense_parameters()
        self.hidden.copy_dense(weight1, bias1)
        self.output.copy_dense(weight2, bias2)


def mlp_forward(x: torch.Tensor, params: list[torch.Tensor]) -> torch.Tensor:
    """The same network from dense [W1, b1, W2, b2] (for functional gradients and Hessians)."""
    weight1, bias1, weight2, bias2 = params
    return nn.functional.linear(torch.relu(nn.functional.linear(x, weight1, bias1)), weight2, bias2)
