"""Exact covering radius r(c) = max_{x in K} min_i |x - c_i| of a `Region`, batched over
configurations, plus the certified grid bounds used to check it.

Why it is exact: on the Voronoi cell V_i of centre c_i the function equals |x - c_i|, which is
convex, so its maximum over V_i ∩ K sits at an extreme point of that piece. Those are: polygon
vertices; points where a Voronoi edge (part of the bisector of c_i, c_j) meets the boundary of K;
Voronoi vertices (circumcentres of c_i, c_j, c_k) inside K; and, on a convex circle arc, the
circle's point farthest from c_i. Every candidate lies in K, so min_i |x - c_i| over all of them
is never above r(c) and its maximum is r(c). Bisectors of every pair and circumcentres of every
triple are taken (not only the Voronoi ones): the extra points are in K, so they cannot raise
the maximum, and the enumeration needs no Voronoi diagram (O(n^2 E + n^3) candidates).
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from optiforge.algorithms.covering.region import Region
from optiforge.algorithms.covering.validation import check_finite_positive


def nearest_distance(points: Tensor, centres: Tensor) -> Tensor:
    """[B, M] distance from each of `points [B, M, 2]` to the nearest of `centres [B, n, 2]`."""
    distances = torch.cdist(points, centres, compute_mode="donot_use_mm_for_euclid_dist")
    return distances.min(-1).values  # no matrix-product shortcut: exact to float64 rounding


def check_centres(centres: Tensor) -> None:
    """`centres` must be a finite [..., n, 2] tensor with n >= 1."""
    if centres.ndim < 2 or centres.shape[-1] != 2 or centres.shape[-2] < 1:
        raise ValueError(f"centres must have shape [..., n >= 1, 2], got {tuple(centres.shape)}")
    if not torch.isfinite(centres).all():
        raise ValueError("centres must be finite")


def pair_index(n: int, device: torch.device) -> Tensor:
    """[n(n-1)/2, 2] all pairs i < j."""
    return torch.tensor(list(itertools.combinations(range(n), 2)), device=device)


def bisectors(centres: Tensor) -> tuple[Tensor, Tensor]:
    """Normals a [B, P, 2] and offsets b [B, P] of the bisectors a . x = b of every pair."""
    pairs = pair_index(centres.shape[1], centres.device)
    ci, cj = centres[:, pairs[:, 0]], centres[:, pairs[:, 1]]
    return cj - ci, 0.5 * ((cj * cj).sum(-1) - (ci * ci).sum(-1))


def segment_crossings(normal: Tensor, offset: Tensor, segments: Tensor) -> Tensor:
    """[B, P * E, 2] points where each bisector meets each boundary segment (NaN if it does not)."""
    start, edge = segments[:, 0], segments[:, 1] - segments[:, 0]
    along = normal @ edge.T  # [B, P, E]
    t = (offset[..., None] - normal @ start.T) / along
    hit = (along.abs() > 1e-15) & (t >= 0) & (t <= 1)
    points = start + t[..., None] * edge
    return torch.where(hit[..., None], points, math.nan).flatten(1, 2)


def circle_crossings(normal: Tensor, offset: Tensor, circles: Tensor) -> Tensor:
    """[B, P * C * 2, 2] points where each bisector meets each circle (NaN where it misses)."""
    length = torch.linalg.vector_norm(normal, dim=-1, keepdim=True)  # [B, P, 1]
    unit = normal / length
    centre, radius = circles[:, :2], circles[:, 2]
    signed = (offset[..., None] - unit @ centre.T) / length.squeeze(-1)[..., None]  # [B, P, C]
    foot = centre + signed[..., None] * unit[..., None, :]
    half = (radius**2 - signed**2).sqrt()[..., None]  # NaN where the line misses the circle
    across = torch.stack((-unit[..., 1], unit[..., 0]), -1)[..., None, :]
    points = torch.stack((foot + half * across, foot - half * across), -2)
    return points.flatten(1, 3)


def farthest_on_circles(centres: Tensor, circles: Tensor) -> Tensor:
    """[B, n * C, 2] the point of each circle farthest from each centre."""
    away = circles[:, :2] - centres[:, :, None]  # [B, n, C, 2]
    length = torch.linalg.vector_norm(away, dim=-1, keepdim=True)
    fallback = torch.tensor([1.0, 0.0], dtype=away.dtype, device=away.device)
    direction = torch.where(length > 1e-15, away / length.clamp_min(1e-300), fallback)
    return (circles[:, :2] + circles[:, 2:] * direction).flatten(1, 2)


def circumcentres(centres: Tensor) -> Tensor:
    """[B, T, 2] circumcentres of every triple of centres (NaN for collinear triples)."""
    n = centres.shape[1]
    triples = torch.tensor(list(itertools.combinations(range(n), 3)), device=centres.device)
    ci, cj, ck = (centres[:, triples[:, m]] for m in range(3))
    a1, a2 = cj - ci, ck - ci
    b1 = 0.5 * ((cj * cj).sum(-1) - (ci * ci).sum(-1))
    b2 = 0.5 * ((ck * ck).sum(-1) - (ci * ci).sum(-1))
    det = a1[..., 0] * a2[..., 1] - a1[..., 1] * a2[..., 0]
    ok = det.abs() > 1e-14
    det = torch.where(ok, det, torch.ones_like(det))
    x = (b1 * a2[..., 1] - b2 * a1[..., 1]) / det
    y = (a1[..., 0] * b2 - a2[..., 0] * b1) / det
    return torch.where(ok[..., None], torch.stack((x, y), -1), math.nan)


def candidates(region: Region, centres: Tensor) -> Tensor:
    """[B, Q, 2] points of K containing a maximiser of min_i |x - c_i| (NaN rows unused)."""
    batch, n = centres.shape[:2]
    parts = []
    if region.segments.shape[0]:
        parts.append(region.vertices.expand(batch, -1, -1))
    if region.circles.shape[0]:
        parts.append(farthest_on_circles(centres, region.circles[~region.holes]))
    if n >= 2:
        normal, offset = bisectors(centres)
        if region.segments.shape[0]:
            parts.append(segment_crossings(normal, offset, region.segments))
        if region.circles.shape[0]:
            parts.append(circle_crossings(normal, offset, region.circles))
    if n >= 3:
        inner = circumcentres(centres)
        inside = region.contains(torch.nan_to_num(inner, nan=math.inf))
        parts.append(torch.where(inside[..., None], inner, math.nan))
    return torch.cat(parts, 1)


def covering_radius(region: Region, centres: Tensor) -> Tensor:
    """[...] exact r(c) for `centres [..., n, 2]` (float64; on the centres' device)."""
    check_centres(centres)
    flat = centres.reshape(-1, *centres.shape[-2:]).to(torch.float64)
    points = candidates(region.to(flat.device), flat)
    gaps = nearest_distance(torch.nan_to_num(points, nan=0.0), flat)
    gaps = torch.where(torch.isnan(points[..., 0]), -math.inf, gaps)
    return gaps.max(-1).values.reshape(centres.shape[:-2])


def grid_bounds(region: Region, centres: Tensor, step: float) -> tuple[Tensor, Tensor]:
    """Certified (lower, upper) on r(c) from a grid of spacing `step` (brute force).

    lower: max over grid points inside K, so lower <= r. upper: every x in K lies in a grid cell
    whose centre z is within step * sqrt(2) / 2 of x, hence of K, so r <= max over such z of
    min_i |z - c_i| + step * sqrt(2) / 2.
    """
    check_finite_positive("step", step)
    check_centres(centres)
    flat = centres.reshape(-1, *centres.shape[-2:]).to(torch.float64)
    region = region.to(flat.device)
    inside = region.grid(step)
    lower = nearest_distance(inside.expand(flat.shape[0], -1, -1), flat).max(-1).values
    xmin, ymin, xmax, ymax = region.bounds()
    half = step / 2
    xs = torch.arange(xmin - half, xmax + step, step, dtype=torch.float64, device=flat.device)
    ys = torch.arange(ymin - half, ymax + step, step, dtype=torch.float64, device=flat.device)
    cells = torch.cartesian_prod(xs, ys)
    slack = step * math.sqrt(2) / 2
    near = cells[region.distance(cells) <= slack]
    upper = nearest_distance(near.expand(flat.shape[0], -1, -1), flat).max(-1).values + slack
    return lower.reshape(centres.shape[:-2]), upper.reshape(centres.shape[:-2])
