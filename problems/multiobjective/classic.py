"""Classic test problems with analytic fronts: ZDT1, ZDT2 (two objectives) and DTLZ1, DTLZ2
(any number of objectives), as defined by Zitzler-Deb-Thiele (2000) and Deb-Thiele-Laumanns-
Zitzler (2002). All live in the unit box."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from optiforge.problems.multiobjective.problem import MultiObjectiveProblem
from optiforge.problems.multiobjective.reference_directions import lattice_near


class ZDT(MultiObjectiveProblem):
    """ZDT1 (convex front `f2 = 1 - sqrt(f1)`) or ZDT2 (concave front `f2 = 1 - f1^2`)."""

    def __init__(self, name: str = "zdt1", dim: int = 30) -> None:
        if name not in ("zdt1", "zdt2"):
            raise ValueError(f"name must be one of ['zdt1', 'zdt2'], got {name!r}")
        super().__init__(dim, 2, torch.zeros(dim), torch.ones(dim))
        self.name = name

    def _shape(self, ratio: Tensor) -> Tensor:
        return 1.0 - (ratio.clamp_min(0.0).sqrt() if self.name == "zdt1" else ratio**2)

    def _objectives(self, x: Tensor) -> Tensor:
        f1 = x[:, 0]
        g = 1.0 + 9.0 * x[:, 1:].mean(dim=1) if self.dim > 1 else torch.ones_like(f1)
        return torch.stack([f1, g * self._shape(f1 / g)], dim=1)

    def pareto_set(self, num_points: int) -> Tensor:
        x = torch.zeros(num_points, self.dim, dtype=torch.float64)
        x[:, 0] = torch.linspace(0.0, 1.0, num_points, dtype=torch.float64)
        return x

    def front_residual(self, f: Tensor) -> Tensor:
        return f[:, 1] - self._shape(f[:, 0])


class DTLZ(MultiObjectiveProblem):
    """DTLZ1 (linear front `sum f = 1/2`, multimodal `g`) or DTLZ2 (spherical front
    `sum f^2 = 1`) with `num_obj` objectives and `dim - num_obj + 1` distance variables."""

    def __init__(self, name: str = "dtlz2", dim: int = 12, num_obj: int = 3) -> None:
        if name not in ("dtlz1", "dtlz2"):
            raise ValueError(f"name must be one of ['dtlz1', 'dtlz2'], got {name!r}")
        super().__init__(dim, num_obj, torch.zeros(dim), torch.ones(dim))
        self.name = name

    def _objectives(self, x: Tensor) -> Tensor:
        lead, rest = x[:, : self.num_obj - 1], x[:, self.num_obj - 1 :] - 0.5
        ones = torch.ones_like(x[:, :1])
        if self.name == "dtlz1":
            g = 100.0 * (rest.shape[1] + (rest**2 - torch.cos(20.0 * math.pi * rest)).sum(dim=1))
            prods = torch.cumprod(torch.cat([ones, lead], dim=1), dim=1)  # x1...x_{i}
            tails = torch.cat([ones, 1.0 - lead.flip(1)], dim=1)  # 1, 1-x_{M-1}, ..., 1-x_1
            return 0.5 * (1.0 + g).unsqueeze(1) * prods.flip(1) * tails
        g = (rest**2).sum(dim=1)
        half = 0.5 * math.pi * lead
        prods = torch.cumprod(torch.cat([ones, half.cos()], dim=1), dim=1)
        tails = torch.cat([ones, half.flip(1).sin()], dim=1)
        return (1.0 + g).unsqueeze(1) * prods.flip(1) * tails

    def pareto_set(self, num_points: int) -> Tensor:
        front = lattice_near(self.num_obj, num_points)
        lead = self._lead_from_front(front if self.name == "dtlz1" else front.sqrt())
        rest = torch.full((len(front), self.dim - self.num_obj + 1), 0.5, dtype=torch.float64)
        return torch.cat([lead, rest], dim=1)

    def _lead_from_front(self, front: Tensor) -> Tensor:
        """Invert the position mapping: leading variables whose front point is `front` (scaled to
        sum 1 for DTLZ1, unit norm for DTLZ2)."""
        lead = torch.zeros(len(front), self.num_obj - 1, dtype=torch.float64)
        remaining = torch.ones(len(front), dtype=torch.float64)  # product of earlier factors
        for i in range(self.num_obj - 1):  # loop over objectives, not over points
            last = front[:, self.num_obj - 1 - i]
            if self.name == "dtlz1":
                share = 1.0 - torch.where(remaining > 0, last / remaining.clamp_min(1e-300), 0.0)
                lead[:, i] = share.clamp(0.0, 1.0)
                remaining = remaining * lead[:, i]
            else:
                angle = torch.asin((last / remaining.clamp_min(1e-300)).clamp(-1.0, 1.0))
                lead[:, i] = torch.where(remaining > 0, angle / (0.5 * math.pi), 0.0)
                remaining = remaining * torch.cos(0.5 * math.pi * lead[:, i])
        return lead

    def front_residual(self, f: Tensor) -> Tensor:
        if self.name == "dtlz1":
            return f.sum(dim=1) - 0.5
        return (f**2).sum(dim=1) - 1.0
