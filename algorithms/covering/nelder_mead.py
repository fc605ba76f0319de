"""Generic derivative-free baseline: scipy's Nelder-Mead on the 2n centre coordinates, restarted
from fresh uniform starts until it has spent a given number of evaluations of r.

The budget is counted in calls of the exact radius, so it can be set equal to the smoothed
method's `restarts * steps * (samples + 1)`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.optimize import minimize

from optiforge.algorithms.covering.cover import Cover, random_starts
from optiforge.algorithms.covering.radius import covering_radius
from optiforge.algorithms.covering.region import Region
from optiforge.algorithms.covering.validation import check_count


def nelder_mead_cover(region: Region, n: int, evaluations: int, seed: int = 0) -> Cover:
    """Best cover from Nelder-Mead runs (each to convergence or the remaining budget) that
    together call r exactly `evaluations` times or fewer."""
    check_count("evaluations", evaluations)
    generator = torch.Generator().manual_seed(seed)
    spent, radii = 0, []
    best, best_radius = None, math.inf

    def radius(flat: np.ndarray) -> float:
        return float(covering_radius(region, torch.from_numpy(flat).reshape(1, n, 2))[0])

    while evaluations - spent > 2 * n + 1:
        start = random_starts(region, n, 1, generator)[0].flatten().numpy()
        options = {"maxfev": evaluations - spent, "xatol": 1e-9, "fatol": 1e-12, "adaptive": True}
        result = minimize(radius, start, method="Nelder-Mead", options=options)
        spent += result.nfev
        radii.append(float(result.fun))
        if result.fun < best_radius:
            best, best_radius = result.x, float(result.fun)
    if best is None:
        raise ValueError(f"evaluations must be > 2n + 1 = {2 * n + 1}, got {evaluations}")
    centres = torch.from_numpy(best).reshape(n, 2)
    return Cover(centres, best_radius, torch.tensor(radii, dtype=torch.float64), spent)
