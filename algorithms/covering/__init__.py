"""Optimal covering of compact planar sets with n Euclidean balls: exact covering radius of
polygons, disks and annuli, the Gaussian-smoothed zeroth-order method with randomized restarts
(batched in torch), Gonzalez's farthest-point k-center and Nelder-Mead baselines, point-cloud and
membership-function sets, and the best known radii of the unit square and disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from algorithms.covering.cloud import cloud_radius, membership_cloud
    from algorithms.covering.cover import Cover, random_starts, restarts_needed, smoothed_cover
    from algorithms.covering.gonzalez import farthest_point, gonzalez_cover
    from algorithms.covering.known import KNOWN_RADII
    from algorithms.covering.nelder_mead import nelder_mead_cover
    from algorithms.covering.radius import covering_radius, grid_bounds
    from algorithms.covering.region import Region
    from algorithms.covering.shapes import annulus, comb, disk, l_shape, named, polygon, unit_square
    from algorithms.covering.smoothed import Descent, SmoothedZerothOrder

__all__ = [
    "KNOWN_RADII",
    "Cover",
    "Descent",
    "Region",
    "SmoothedZerothOrder",
    "annulus",
    "cloud_radius",
    "comb",
    "covering_radius",
    "disk",
    "farthest_point",
    "gonzalez_cover",
    "grid_bounds",
    "l_shape",
    "membership_cloud",
    "named",
    "nelder_mead_cover",
    "polygon",
    "random_starts",
    "restarts_needed",
    "smoothed_cover",
    "unit_square",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "algorithms.covering.cloud": ("cloud_radius", "membership_cloud"),
        "algorithms.covering.cover": (
            "Cover",
            "random_starts",
            "restarts_needed",
            "smoothed_cover",
        ),
        "algorithms.covering.gonzalez": ("farthest_point", "gonzalez_cover"),
        "algorithms.covering.known": ("KNOWN_RADII",),
        "algorithms.covering.nelder_mead": ("nelder_mead_cover",),
        "algorithms.covering.radius": ("covering_radius", "grid_bounds"),
        "algorithms.covering.region": ("Region",),
        "algorithms.covering.shapes": (
            "annulus",
            "comb",
            "disk",
            "l_shape",
            "named",
            "polygon",
            "unit_square",
        ),
        "algorithms.covering.smoothed": ("Descent", "SmoothedZerothOrder"),
    },
)
