"""The multi-objective problem contract: box-bounded, batched torch evaluation, a known front."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import Tensor


class MultiObjectiveProblem(ABC):
    """A black-box minimisation problem `f: [lower, upper] ⊂ R^D -> R^M` with a known Pareto front.

    `evaluate` takes a batch `x [n, D]` on any device and returns `F [n, M]` on the same device;
    a point outside the box is refused (a penalty rule belongs to `EvaluationBudget`).
    """

    name: str = ""

    def __init__(self, dim: int, num_obj: int, lower: Tensor, upper: Tensor) -> None:
        if num_obj < 2:
            raise ValueError(f"num_obj must be >= 2 for a multi-objective problem, got {num_obj}")
        if dim < num_obj:
            raise ValueError(f"dim must be >= num_obj = {num_obj}, got {dim}")
        if lower.shape != (dim,) or upper.shape != (dim,) or bool((lower >= upper).any()):
            raise ValueError("lower and upper must have shape (dim,) with lower < upper")
        self.dim, self.num_obj = dim, num_obj
        self.lower, self.upper = lower.double(), upper.double()

    def known_ideal(self) -> Tensor:
        """The exact ideal point (componentwise minimum over the box) `[M]`, float64: the origin
        for every problem here (each objective is >= 0 and reaches 0 on the front)."""
        return torch.zeros(self.num_obj, dtype=torch.float64)

    def bounds(self, like: Tensor) -> tuple[Tensor, Tensor]:
        """The box `(lower, upper)` on `like`'s device and dtype."""
        return self.lower.to(like), self.upper.to(like)

    def outside(self, x: Tensor) -> Tensor:
        """Which rows of `x [n, D]` leave the box: bool `[n]`."""
        lower, upper = self.bounds(x)
        return ((x < lower) | (x > upper)).any(dim=1)

    def evaluate(self, x: Tensor) -> Tensor:
        """Objective values `F [n, M]` of the points `x [n, D]` (all inside the box)."""
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape [n, {self.dim}], got {list(x.shape)}")
        if not x.is_floating_point():
            raise ValueError(f"x must be a floating-point tensor, got {x.dtype}")
        if bool(self.outside(x).any()):
            raise ValueError(
                "x: points outside the box [lower, upper]; evaluate through "
                "EvaluationBudget(..., out_of_box='penalty') to penalise them instead"
            )
        return self._objectives(x)

    @abstractmethod
    def _objectives(self, x: Tensor) -> Tensor:
        """`F [n, M]` of in-box points."""

    @abstractmethod
    def pareto_set(self, num_points: int) -> Tensor:
        """About `num_points` Pareto-optimal points `x [n, D]` (float64, CPU)."""

    @abstractmethod
    def front_residual(self, f: Tensor) -> Tensor:
        """The analytic front equation's residual at `f [n, M]`: zero on the front, `[n]`."""

    def pareto_front(self, num_points: int) -> Tensor:
        """About `num_points` points of the true front `[n, M]` (float64, CPU)."""
        return self._objectives(self.pareto_set(num_points))


def orthogonal_matrices(count: int, size: int, seed: int) -> Tensor:
    """`count` random orthogonal `size x size` matrices (QR of Gaussians, signs fixed), float64."""
    generator = torch.Generator().manual_seed(seed)
    gauss = torch.randn(count, size, size, generator=generator, dtype=torch.float64)
    q, r = torch.linalg.qr(gauss)
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)


def grid_unit_square(num_points: int) -> Tensor:
    """A `k x k` grid of `[0, 1]^2`, `k = round(sqrt(num_points))`: `[k*k, 2]` float64."""
    k = max(2, round(num_points**0.5))
    axis = torch.linspace(0.0, 1.0, k, dtype=torch.float64)
    a, b = torch.meshgrid(axis, axis, indexing="ij")
    return torch.stack([a.reshape(-1), b.reshape(-1)], dim=1)
