"""Optimal covering of compact planar sets with n Euclidean balls: exact covering radius of
polygons, disks and annuli, the Gaussian-smoothed zeroth-order method with randomized restarts
(batched in torch), Gonzalez's farthest-point k-center and Nelder-Mead baselines, point-cloud and
membership-function sets, and the best known radii of the unit square and disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.covering.cloud import cloud_radius, membership_cloud
    from optiforge.algorithms.covering.cover import (
        Cover,
        random_starts,
        restarts_needed,
        smoothed_cover,
    )
    from optiforge.algorithms.covering.gonzalez import farthest_point, gonzalez_cover
    from optiforge.algorithms.covering.known import KNOWN_RADII
    from optiforge.algorithms.covering.nelder_mead import nelder_mead_cover
    from optiforge.algorithms.covering.radius import covering_radius, grid_bounds
    from optiforge.algorithms.covering.region import Region
    from optiforge.algorithms.covering.shapes import (
        annulus,
        comb,
        disk,
        l_shape,
        named,
        polygon,
        unit_square,
    )
    from optiforge.algorithms.covering.smoothed import Descent, SmoothedZerothOrder

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
        "optiforge.algorithms.covering.cloud": ("cloud_radius", "membership_cloud"),
        "optiforge.algorithms.covering.cover": (
            "Cover",
            "random_starts",
            "restarts_needed",
            "smoothed_cover",
        ),
        "optiforge.algorithms.covering.gonzalez": ("farthest_point", "gonzalez_cover"),
        "optiforge.algorithms.covering.known": ("KNOWN_RADII",),
        "optiforge.algorithms.covering.nelder_mead": ("nelder_mead_cover",),
        "optiforge.algorithms.covering.radius": ("covering_radius", "grid_bounds"),
        "optiforge.algorithms.covering.region": ("Region",),
        "optiforge.algorithms.covering.shapes": (
            "annulus",
            "comb",
            "disk",
            "l_shape",
            "named",
            "polygon",
            "unit_square",
        ),
        "optiforge.algorithms.covering.smoothed": ("Descent", "SmoothedZerothOrder"),
    },
)
