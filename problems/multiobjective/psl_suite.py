"""The black-box Pareto-set-learning suite of Neural-ES (Lu et al., NeurIPS 2025): psl1 ... psl9.

Each problem is UF-like and non-separable: the first `M - 1` variables place a point on the
front, the remaining `D - M + 1` ("distance") variables must follow a curved Pareto set
`ps(x_lead)`, and their error enters every objective through its own random rotation and an
elliptical kernel,

    f_i(x) = pf_i(x_lead) + sum_j c^(j / (m - 1)) ((d R_i)_j)^2 / m,   d = x_rest - ps(x_lead),

with `m = D - M + 1`, condition `c = 100` (two objectives) or `2` (three objectives). Fronts:
`f2 = 1 - sqrt(f1)` (psl1-psl4) and the unit sphere's positive octant (psl5-psl9).
Reproduced from the authors' problem definitions (code P1-P9; the paper's F1-F8): the boxes
(`x1 in [0, 1]`, rest in `[-1, 1]`; `x1, x2 in [0, 1]`, rest in `[-2, 2]`), the Pareto-set
shapes and the conditions. Rotations come from `seed` (torch's generator, not numpy's, so the
matrices differ from the authors' for the same seed).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from optiforge.problems.multiobjective.problem import (
    MultiObjectiveProblem,
    grid_unit_square,
    orthogonal_matrices,
)

PI = math.pi


def _split(x: Tensor, m: int) -> Tensor:
    """Position of each distance variable, `j / (m - 1)` in the authors' indexing: `[m]`."""
    return torch.arange(m, dtype=x.dtype, device=x.device) / max(m - 1, 1)


def _ps1(x: Tensor, m: int) -> Tensor:
    x1 = x[:, :1]
    angle = 2.0 * PI * x1
    even = torch.arange(m, device=x.device) % 2 == 0
    wave = torch.where(even, torch.cos(angle), torch.sin(angle))
    return x1 * wave * 0.75 * (1.0 - _split(x, m))


def _ps2(x: Tensor, m: int) -> Tensor:
    x1, idx = x[:, :1], _split(x, m)
    even = torch.arange(m, device=x.device) % 2 == 0
    return torch.where(even, (0.5 - (2.0 * x1 - 1.0) ** 2) * (1.0 - idx), x1 ** (1.0 + idx) - 0.5)


def _ps3(x: Tensor, m: int) -> Tensor:
    x1, idx = 2.0 * x[:, :1] - 1.0, _split(x, m)
    return (1.0 - idx) * x1**3 + idx * x1


def _ps4(x: Tensor, m: int) -> Tensor:
    return 2.0 * x[:, :1] ** (0.5 + 1.5 * _split(x, m)) - 1.0


def _decay(x: Tensor, m: int) -> Tensor:
    """`1 - j / m`: the three-objective sets flatten towards the last variable."""
    return 1.0 - torch.arange(m, dtype=x.dtype, device=x.device) / m


def _ps5(x: Tensor, m: int) -> Tensor:
    x1, x2 = x[:, :1], x[:, 1:2]
    return torch.cos(PI * (x1 + x2) / 2) * torch.cos(PI * (x1 - x2).abs()) * _decay(x, m) / 2


def _ps6(x: Tensor, m: int) -> Tensor:
    x1, x2 = x[:, :1], x[:, 1:2]
    return (x1**2 * (1.0 - x2) + (1.0 - x1**2) * x2 - 0.5) * _decay(x, m)


def _ps7(x: Tensor, m: int) -> Tensor:
    x1, x2 = 2.0 * x[:, :1] - 1.0, x[:, 1:2]
    return (x2 * (1.0 - x1**2) + (1.0 - x2) * x1**2 / 2.0 - 0.5) * _decay(x, m)


def _ps8(x: Tensor, m: int) -> Tensor:
    x1, x2 = 2.0 * x[:, :1] - 1.0, 2.0 * x[:, 1:2] - 1.0
    return (x1**2 - x2**2) / 2.0 * _decay(x, m)


def _ps9(x: Tensor, m: int) -> Tensor:
    x1, x2 = x[:, :1], x[:, 1:2]
    return (x2 * torch.cos(PI * x1) + (1.0 - x2) * torch.cos(PI * (1.0 - x1)) / 2.0) * _decay(x, m)


PARETO_SETS: dict[str, tuple[int, Callable[[Tensor, int], Tensor]]] = {
    "psl1": (2, _ps1),
    "psl2": (2, _ps2),
    "psl3": (2, _ps3),
    "psl4": (2, _ps4),
    "psl5": (3, _ps5),
    "psl6": (3, _ps6),
    "psl7": (3, _ps7),
    "psl8": (3, _ps8),
    "psl9": (3, _ps9),
}


class RotatedPSLProblem(MultiObjectiveProblem):
    """One problem of the suite by name (`psl1` ... `psl9`), dimension `dim`, rotation `seed`."""

    def __init__(self, name: str, dim: int = 30, seed: int = 1) -> None:
        if name not in PARETO_SETS:
            raise ValueError(f"name must be one of {sorted(PARETO_SETS)}, got {name!r}")
        num_obj, self._ps = PARETO_SETS[name]
        if dim < num_obj:
            raise ValueError(f"dim must be >= num_obj = {num_obj} for {name}, got {dim}")
        lead, rest = num_obj - 1, dim - num_obj + 1
        spread = 1.0 if num_obj == 2 else 2.0
        lower = torch.cat([torch.zeros(lead), torch.full((rest,), -spread)])
        upper = torch.cat([torch.ones(lead), torch.full((rest,), spread)])
        super().__init__(dim, num_obj, lower, upper)
        self.name, self.seed = name, seed
        self.condition = 100.0 if num_obj == 2 else 2.0
        self.rotations = orthogonal_matrices(num_obj, rest, seed)  # [M, m, m]
        self.kernel_weights = self.condition ** _split(self.lower, rest)  # [m]

    def _objectives(self, x: Tensor) -> Tensor:
        lead, rest = self.num_obj - 1, self.dim - self.num_obj + 1
        d = x[:, lead:] - self._ps(x, rest)
        rotated = torch.einsum("nj,mjk->nmk", d, self.rotations.to(x))
        distance = (self.kernel_weights.to(x) * rotated**2).sum(dim=2) / rest  # [n, M]
        return self._front(x[:, :lead]) + distance

    def _front(self, lead: Tensor) -> Tensor:
        """`pf(x_lead) [n, M]`: the objectives at zero distance."""
        if self.num_obj == 2:
            return torch.cat([lead, 1.0 - lead.clamp_min(0.0).sqrt()], dim=1)
        half = 0.5 * PI * lead
        c1, s1, c2, s2 = half[:, :1].cos(), half[:, :1].sin(), half[:, 1:].cos(), half[:, 1:].sin()
        return torch.cat([c1 * c2, c1 * s2, s1], dim=1)

    def pareto_set(self, num_points: int) -> Tensor:
        if self.num_obj == 2:
            lead = torch.linspace(0.0, 1.0, num_points, dtype=torch.float64).unsqueeze(1)
        else:
            lead = grid_unit_square(num_points)
        padded = torch.cat([lead, torch.zeros(len(lead), self.dim - lead.shape[1])], dim=1)
        return torch.cat([lead, self._ps(padded, self.dim - self.num_obj + 1)], dim=1)

    def front_residual(self, f: Tensor) -> Tensor:
        if self.num_obj == 2:
            return f[:, 1] - (1.0 - f[:, 0].clamp_min(0.0).sqrt())
        return (f**2).sum(dim=1) - 1.0
