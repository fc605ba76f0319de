"""Compact planar sets bounded by straight segments (polygons, holes allowed) or by one disk or
annulus: the sets whose covering radius `optiforge.algorithms.covering.radius` computes exactly.

A `Region` stores its boundary in float64 torch tensors: `segments [E, 2, 2]` (each edge of the
exterior and of every hole) or `circles [C, 3]` (centre x, centre y, radius) with `holes [C]`
flagging a circle whose inside is removed. Membership is the even-odd rule for segments and
"inside every outer circle, outside every hole circle" for circles.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from optiforge.algorithms.covering.validation import check_finite_positive


@dataclass(frozen=True)
class Region:
    """A compact set K in the plane: polygon with holes, or a disk / annulus."""

    name: str
    segments: Tensor  # [E, 2, 2] boundary edges (start, end); empty for a round set
    circles: Tensor  # [C, 3] (x, y, radius); empty for a polygon
    holes: Tensor  # [C] bool: True where K lies outside that circle

    @property
    def vertices(self) -> Tensor:
        """[E, 2] polygon vertices (every edge's start point)."""
        return self.segments[:, 0]

    def bounds(self) -> tuple[float, float, float, float]:
        """(xmin, ymin, xmax, ymax) of K."""
        if self.segments.shape[0]:
            points = self.segments.reshape(-1, 2)
            low, high = points.min(0).values, points.max(0).values
        else:
            outer = self.circles[~self.holes]
            low = (outer[:, :2] - outer[:, 2:]).min(0).values
            high = (outer[:, :2] + outer[:, 2:]).max(0).values
        return (float(low[0]), float(low[1]), float(high[0]), float(high[1]))

    def to(self, device: torch.device | str) -> Region:
        """The same region with its tensors on `device`."""
        return Region(
            self.name, self.segments.to(device), self.circles.to(device), self.holes.to(device)
        )

    def contains(self, points: Tensor) -> Tensor:
        """[...] bool: which of `points [..., 2]` lie in K (boundary included up to rounding)."""
        inside = torch.ones(points.shape[:-1], dtype=torch.bool, device=points.device)
        if self.segments.shape[0]:
            inside = crossings(points, self.segments) % 2 == 1
            inside |= distance_to_segments(points, self.segments) <= 1e-12
        if self.circles.shape[0]:
            gap = torch.linalg.vector_norm(points[..., None, :] - self.circles[:, :2], dim=-1)
            radius = self.circles[:, 2]
            ok = torch.where(self.holes, gap >= radius - 1e-12, gap <= radius + 1e-12)
            inside = inside & ok.all(-1)
        return inside

    def distance(self, points: Tensor) -> Tensor:
        """[...] Euclidean distance from `points [..., 2]` to K (0 inside)."""
        if self.segments.shape[0]:
            gap = distance_to_segments(points, self.segments)
        else:
            centre_gap = torch.linalg.vector_norm(
                points[..., None, :] - self.circles[:, :2], dim=-1
            )
            gap = (centre_gap - self.circles[:, 2]).abs().min(-1).values
        return torch.where(self.contains(points), torch.zeros_like(gap), gap)

    def grid(self, step: float) -> Tensor:
        """[M, 2] points of the square grid of spacing `step` (anchored at the lower-left bound)
        that lie in K: a dense point cloud of the set."""
        check_finite_positive("step", step)
        xmin, ymin, xmax, ymax = self.bounds()
        device = self.segments.device
        xs = torch.arange(xmin, xmax + step / 2, step, dtype=torch.float64, device=device)
        ys = torch.arange(ymin, ymax + step / 2, step, dtype=torch.float64, device=device)
        points = torch.cartesian_prod(xs, ys)
        return points[self.contains(points)]

    def sample(self, count: int, generator: torch.Generator) -> Tensor:
        """[count, 2] points drawn uniformly from K by rejection from its bounding box."""
        xmin, ymin, xmax, ymax = self.bounds()
        low = torch.tensor([xmin, ymin], dtype=torch.float64, device=self.segments.device)
        span = torch.tensor([xmax - xmin, ymax - ymin], dtype=torch.float64, device=low.device)
        kept: list[Tensor] = []
        total = 0
        while total < count:
            draw = low + span * torch.rand(
                (2 * count + 16, 2), generator=generator, dtype=torch.float64, device=low.device
            )
            inside = draw[self.contains(draw)]
            kept.append(inside)
            total += inside.shape[0]
        return torch.cat(kept)[:count]


def crossings(points: Tensor, segments: Tensor) -> Tensor:
    """[...] how many edges a ray from each point towards +x crosses (even-odd rule)."""
    x, y = points[..., None, 0], points[..., None, 1]
    (x0, y0), (x1, y1) = segments[:, 0].unbind(-1), segments[:, 1].unbind(-1)
    straddles = (y0 > y) != (y1 > y)
    safe = torch.where(y1 == y0, torch.ones_like(y0), y1 - y0)
    x_cross = x0 + (y - y0) * (x1 - x0) / safe
    return (straddles & (x < x_cross)).sum(-1)


def distance_to_segments(points: Tensor, segments: Tensor) -> Tensor:
    """[...] distance from each of `points [..., 2]` to the nearest of `segments [E, 2, 2]`."""
    start, edge = segments[:, 0], segments[:, 1] - segments[:, 0]
    offset = points[..., None, :] - start
    t = ((offset * edge).sum(-1) / (edge * edge).sum(-1)).clamp(0.0, 1.0)
    return torch.linalg.vector_norm(offset - t[..., None] * edge, dim=-1).min(-1).values
