"""The compact sets of the benchmark as `Region`s: unit square, L-shape, disk, annulus, and any
polygon (holes allowed) read with shapely, e.g. the nonconvex `COMB_WKT`.

Each constructor checks that its description is a compact set with interior: finite
coordinates, positive area, valid (non-self-intersecting) rings, radii ordered.
"""

from __future__ import annotations

import math

import torch

from optiforge.algorithms.covering.region import Region
from optiforge.algorithms.covering.validation import check_finite_positive

# A nonconvex "comb": three teeth on a base, 12 vertices (the paper tests nonconvex sets; its own
# list is not published, so this one is ours).
COMB_WKT = (
    "POLYGON ((0 0, 1 0, 1 1, 0.8 1, 0.8 0.35, 0.6 0.35, 0.6 1, 0.4 1, 0.4 0.35, 0.2 0.35, "
    "0.2 1, 0 1, 0 0))"
)
L_SHAPE_WKT = "POLYGON ((0 0, 1 0, 1 0.5, 0.5 0.5, 0.5 1, 0 1, 0 0))"
UNIT_SQUARE_WKT = "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"


def polygon(shape: object, name: str = "polygon") -> Region:
    """The region of a shapely `Polygon` (or its WKT text): edges of the exterior and holes."""
    import shapely
    from shapely.geometry import Polygon

    if isinstance(shape, str):
        try:
            shape = shapely.from_wkt(shape)
        except shapely.errors.GEOSException as error:
            raise ValueError(f"shape must be a polygon or its WKT text, got {shape!r}") from error
    if not isinstance(shape, Polygon):
        raise ValueError(f"shape must be a shapely Polygon or POLYGON WKT, got {type(shape)}")
    coords = [list(shape.exterior.coords), *(list(ring.coords) for ring in shape.interiors)]
    if not all(math.isfinite(v) for ring in coords for point in ring for v in point):
        raise ValueError("shape must be bounded: every polygon coordinate must be finite")
    if not shape.is_valid or shape.area <= 0:
        raise ValueError(
            f"shape must be a valid polygon with positive area (a compact set with interior), "
            f"got area {shape.area} and validity {shapely.is_valid_reason(shape)!r}"
        )
    edges = [
        (ring[k][:2], ring[k + 1][:2]) for ring in coords for k in range(len(ring) - 1)
    ]  # shapely rings repeat their first point at the end
    segments = torch.tensor(edges, dtype=torch.float64)
    return Region(
        name, segments, torch.zeros((0, 3), dtype=torch.float64), torch.zeros(0, dtype=torch.bool)
    )


def unit_square() -> Region:
    """[0, 1]^2."""
    return polygon(UNIT_SQUARE_WKT, "square")


def l_shape() -> Region:
    """The unit square without its upper-right quarter [0.5, 1]^2."""
    return polygon(L_SHAPE_WKT, "L-shape")


def comb() -> Region:
    """The nonconvex comb `COMB_WKT`, read with shapely."""
    return polygon(COMB_WKT, "comb")


def annulus(outer: float, inner: float = 0.0, centre: tuple[float, float] = (0.0, 0.0)) -> Region:
    """{x : inner <= |x - centre| <= outer}; `inner = 0` is the closed disk of radius `outer`."""
    check_finite_positive("outer", outer)
    if isinstance(inner, bool) or not isinstance(inner, int | float) or not 0 <= inner < outer:
        raise ValueError(f"inner must be a number in [0, outer = {outer}), got {inner!r}")
    if len(centre) != 2 or not all(math.isfinite(v) for v in centre):
        raise ValueError(f"centre must be two finite numbers, got {centre!r}")
    rows = [(*centre, outer)] + ([(*centre, inner)] if inner > 0 else [])
    holes = torch.tensor([False] + ([True] if inner > 0 else []))
    name = "disk" if inner == 0 else "annulus"
    return Region(
        name,
        torch.zeros((0, 2, 2), dtype=torch.float64),
        torch.tensor(rows, dtype=torch.float64),
        holes,
    )


def disk(radius: float = 1.0) -> Region:
    """The closed disk of `radius` about the origin."""
    return annulus(radius)


def named(name: str) -> Region:
    """One of the benchmark sets by name: square, disk, L-shape, annulus (radii 1 and 0.5), comb."""
    makers = {
        "square": unit_square,
        "disk": disk,
        "L-shape": l_shape,
        "annulus": lambda: annulus(1.0, 0.5),
        "comb": comb,
    }
    if name not in makers:
        raise ValueError(f"set must be one of {sorted(makers)}, got {name!r}")
    return makers[name]()
