"""Sets given as a finite point cloud or as a membership function (`contains(points) -> bool`).

For a finite cloud P the covering radius max_{x in P} min_i |x - c_i| is computed exactly. A
membership function is turned into the cloud of its grid points of spacing h that it accepts;
that cloud's radius r_h satisfies r_h <= r(K), and r(K) <= r_h + h sqrt(2) / 2 holds when every
point of K is within h sqrt(2) / 2 of an accepted grid point (true when K is a union of closed
grid cells with their centres accepted; not certifiable from a membership oracle alone).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from optiforge.algorithms.covering.radius import check_centres, nearest_distance
from optiforge.algorithms.covering.validation import check_finite_positive


def cloud_radius(points: Tensor, centres: Tensor) -> Tensor:
    """[...] max over `points [M, 2]` of the distance to the nearest of `centres [..., n, 2]`."""
    check_centres(centres)
    if points.ndim != 2 or points.shape[1] != 2 or points.shape[0] == 0:
        raise ValueError(f"points must be a non-empty [M, 2] cloud, got {tuple(points.shape)}")
    flat = centres.reshape(-1, *centres.shape[-2:]).to(points.dtype)
    gaps = nearest_distance(points.expand(flat.shape[0], -1, -1), flat)
    return gaps.max(-1).values.reshape(centres.shape[:-2])


def membership_cloud(
    contains: Callable[[Tensor], Tensor],
    bounds: tuple[float, float, float, float],
    step: float,
) -> Tensor:
    """[M, 2] grid points of spacing `step` in `bounds` (xmin, ymin, xmax, ymax) accepted by
    `contains`; an empty result is refused (the set must have points)."""
    check_finite_positive("step", step)
    xmin, ymin, xmax, ymax = bounds
    if not (xmin <= xmax and ymin <= ymax) or not all(map(torch.isfinite, torch.tensor(bounds))):
        raise ValueError(f"bounds must be finite (xmin, ymin, xmax, ymax) in order, got {bounds}")
    xs = torch.arange(xmin, xmax + step / 2, step, dtype=torch.float64)
    ys = torch.arange(ymin, ymax + step / 2, step, dtype=torch.float64)
    grid = torch.cartesian_prod(xs, ys)
    cloud = grid[contains(grid)]
    if cloud.shape[0] == 0:
        raise ValueError("contains accepts no grid point in bounds: the set is empty at this step")
    return cloud
