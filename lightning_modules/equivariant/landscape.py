"""Loss-landscape measurements of a two-layer permutation network, in the MLP's dense coordinates.

At a point on the equivariant subspace: the part of the full MLP gradient orthogonal to the
subspace (zero at a critical point of a permutation-invariant loss, by symmetric criticality;
nonzero here only through the finite sample), and the exact Hessian's eigenvalues split into the
subspace block Q^T H Q (is the point a minimum of the constrained problem?) and the complement
block C^T H C (a negative eigenvalue is a direction in which the relaxed MLP can escape).
"""

from __future__ import annotations

import torch
from torch.nn.functional import mse_loss

from optiforge.problems.equivariant.permutation_mlp import PermutationMLP, mlp_forward


def subspace_basis(network: PermutationMLP) -> torch.Tensor:
    """Orthonormal basis [parameters, orbits] of the equivariant subspace in dense coordinates:
    one column per orbit, 1/sqrt(orbit size) on the orbit's entries."""
    columns = []
    for labels, count in network.labels():
        flat = labels.reshape(-1)
        block = torch.zeros(flat.numel(), count, dtype=torch.float64)
        block[torch.arange(flat.numel()), flat] = 1.0
        columns.append(block / block.sum(0).sqrt())
    return torch.block_diag(*columns)


def complement_basis(basis: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis of the orthogonal complement of span(basis)."""
    projector = torch.eye(basis.shape[0], dtype=basis.dtype) - basis @ basis.T
    values, vectors = torch.linalg.eigh(projector)
    return vectors[:, values > 0.5]


def landscape_at(network: PermutationMLP, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """Loss, gradient split and Hessian spectrum (float64) of the mean squared error at the
    network's current point, with every parameter free (the unconstrained MLP)."""
    shapes = [p.shape for p in network.dense_parameters()]
    point = torch.cat([p.detach().double().reshape(-1) for p in network.dense_parameters()])
    x, y = x.double(), y.double()

    def loss(flat: torch.Tensor) -> torch.Tensor:
        params, start = [], 0
        for shape in shapes:
            size = shape.numel()
            params.append(flat[start : start + size].reshape(shape))
            start += size
        return mse_loss(mlp_forward(x, params), y)

    gradient = torch.func.grad(loss)(point)
    hessian = torch.func.hessian(loss)(point)
    inside = subspace_basis(network)
    outside = complement_basis(inside)
    inside_eigs = torch.linalg.eigvalsh(inside.T @ hessian @ inside)
    outside_eigs = torch.linalg.eigvalsh(outside.T @ hessian @ outside)
    return {
        "loss": float(loss(point)),
        "grad_norm": float(gradient.norm()),
        "grad_outside_norm": float((outside.T @ gradient).norm()),
        "hessian_min_inside": float(inside_eigs[0]),
        "hessian_min_outside": float(outside_eigs[0]),
        "hessian_negative_outside": int((outside_eigs < -1e-8).sum()),
        "hessian_min": float(torch.linalg.eigvalsh(hessian)[0]),
    }
