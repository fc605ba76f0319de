"""Front-quality indicators through moocore: IGD against a true front, and hypervolume."""

from __future__ import annotations

import moocore
import numpy as np
from torch import Tensor


def igd(f: Tensor, front: Tensor) -> float:
    """Inverted generational distance: mean over `front [k, M]` of the Euclidean distance to the
    nearest row of `f [n, M]` (non-finite rows dropped; inf if none is left)."""
    points = _finite(f)
    if len(points) == 0:
        return float("inf")
    return float(moocore.igd(points, ref=front.detach().cpu().double().numpy()))


def hypervolume(f: Tensor, reference: Tensor) -> float:
    """Hypervolume dominated by `f [n, M]` and bounded by the `reference [M]` point."""
    points = _finite(f)
    ref = reference.detach().cpu().double().numpy()
    points = points[(points < ref).all(axis=1)]
    return 0.0 if len(points) == 0 else float(moocore.hypervolume(points, ref=ref))


def _finite(f: Tensor) -> np.ndarray:
    points = f.detach().cpu().double().numpy()
    return points[np.isfinite(points).all(axis=1)]
