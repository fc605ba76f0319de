"""Gonzalez's farthest-point k-center on a dense point cloud of K, batched over starting points.

Start from one point of the cloud, then n - 1 times add the cloud point farthest from the
centres chosen so far. On the cloud this is a 2-approximation of the optimal k-center radius
(Gonzalez 1985); its centres are then scored by the exact radius of K.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.covering.cover import Cover
from optiforge.algorithms.covering.radius import covering_radius
from optiforge.algorithms.covering.region import Region
from optiforge.algorithms.covering.validation import check_count


def farthest_point(points: Tensor, n: int, first: Tensor) -> Tensor:
    """[B, n, 2] farthest-point centres from `points [M, 2]`, restart b starting at point
    `first[b]`."""
    check_count("n", n)
    if points.shape[0] == 0:
        raise ValueError("points must hold at least one point of the set, got none")
    batch = first.shape[0]
    chosen = [points[first]]
    nearest = torch.linalg.vector_norm(points - chosen[0][:, None], dim=-1)  # [B, M]
    for _ in range(n - 1):
        pick = points[nearest.argmax(-1)]
        chosen.append(pick)
        gap = torch.linalg.vector_norm(points - pick[:, None], dim=-1)
        nearest = torch.minimum(nearest, gap)
    return torch.stack(chosen, 1).reshape(batch, n, 2)


def gonzalez_cover(
    region: Region,
    n: int,
    step: float = 0.01,
    restarts: int = 32,
    seed: int = 0,
    device: str = "cpu",
) -> Cover:
    """Best of `restarts` farthest-point runs on the grid of spacing `step` inside K."""
    check_count("restarts", restarts)
    on_device = region.to(device)
    points = on_device.grid(step)
    generator = torch.Generator(device).manual_seed(seed)
    first = torch.randint(points.shape[0], (restarts,), generator=generator, device=device)
    centres = farthest_point(points, n, first)
    radii = covering_radius(on_device, centres)
    best = int(radii.argmin())
    return Cover(centres[best].cpu(), float(radii[best]), radii.cpu(), 0)
