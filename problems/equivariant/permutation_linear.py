"""Dense layer between permutation representations, tied (equivariant) or free, and its projection.

A tied layer stores one value per orbit of S_n on (out point, in point) pairs and expands it to
the dense weight, so an equivariant network is literally a linear subspace of the unconstrained
MLP of the same shape. A free layer stores the dense weight; the Reynolds projection (group
averaging, here the mean over each orbit, which is the orthogonal projection onto the equivariant
subspace) and the distance to that subspace are defined for both.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from optiforge.problems.equivariant.permutation_rep import PermutationRep, bias_labels, orbit_labels


def orbit_means(values: torch.Tensor, labels: torch.Tensor, count: int) -> torch.Tensor:
    """Mean of `values` over each orbit: [count]."""
    flat, index = values.reshape(-1), labels.reshape(-1)
    sums = torch.zeros(count, dtype=values.dtype, device=values.device).index_add(0, index, flat)
    sizes = torch.bincount(index, minlength=count).to(values.dtype)
    return sums / sizes


def reynolds(values: torch.Tensor, labels: torch.Tensor, count: int) -> torch.Tensor:
    """Orthogonal projection of a dense weight or bias onto the equivariant subspace."""
    return orbit_means(values, labels, count)[labels]


class PermutationLinear(nn.Module):
    """y = W x + b from R^{in_rep} to R^{out_rep}; `tied` keeps W, b equivariant by construction.

    Initialization (both modes): every stored value ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as
    torch's nn.Linear; for a tied layer that makes each dense entry follow the same law (entries
    of one orbit are equal).
    """

    def __init__(self, in_rep: PermutationRep, out_rep: PermutationRep, tied: bool) -> None:
        super().__init__()
        self.in_rep, self.out_rep, self.tied = in_rep, out_rep, tied
        weight_labels, self.weight_orbits = orbit_labels(out_rep, in_rep)
        bias_label, self.bias_orbits = bias_labels(out_rep)
        self.register_buffer("weight_labels", weight_labels, persistent=False)
        self.register_buffer("bias_labels", bias_label, persistent=False)
        bound = 1 / math.sqrt(in_rep.dim)
        weight_shape = (self.weight_orbits,) if tied else (out_rep.dim, in_rep.dim)
        bias_shape = (self.bias_orbits,) if tied else (out_rep.dim,)
        self.weight_values = nn.Parameter(torch.empty(weight_shape).uniform_(-bound, bound))
        self.bias_values = nn.Parameter(torch.empty(bias_shape).uniform_(-bound, bound))

    def weight(self) -> torch.Tensor:
        """The dense weight [out dim, in dim]."""
        return self.weight_values[self.weight_labels] if self.tied else self.weight_values

    def bias(self) -> torch.Tensor:
        """The dense bias [out dim]."""
        return self.bias_values[self.bias_labels] if self.tied else self.bias_values

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight(), self.bias())

    def projected(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Reynolds projection of the dense weight and bias (equal to them when tied)."""
        return (
            reynolds(self.weight(), self.weight_labels, self.weight_orbits),
            reynolds(self.bias(), self.bias_labels, self.bias_orbits),
        )

    def squared_distance(self) -> torch.Tensor:
        """||W - proj W||^2 + ||b - proj b||^2 (differentiable: the relaxation penalty)."""
        weight, bias = self.projected()
        return (self.weight() - weight).square().sum() + (self.bias() - bias).square().sum()

    @torch.no_grad()
    def copy_dense(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        """Set a free layer's dense weight and bias (e.g. onto a tied layer's point)."""
        if self.tied:
            raise ValueError("copy_dense sets a free layer; a tied layer stores orbit values")
        self.weight_values.copy_(weight)
        self.bias_values.copy_(bias)
