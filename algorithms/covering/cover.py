"""Optimal covering with randomized restarts: draw B starting configurations uniformly in K,
run the smoothed zeroth-order method on all of them at once, keep the best cover.

The paper's restarts make the local method global: the best of B independent runs reaches the
optimal cover with probability 1 - (1 - p)^B when one run does with probability p. `Cover`
keeps every restart's radius so that p and the restarts needed can be measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from optiforge.algorithms.covering.radius import covering_radius
from optiforge.algorithms.covering.region import Region
from optiforge.algorithms.covering.smoothed import SmoothedZerothOrder
from optiforge.algorithms.covering.validation import check_count


@dataclass(frozen=True)
class Cover:
    """The best centres [n, 2] found, their exact radius, every restart's radius [B] (in restart
    order), and evaluations of r spent in all."""

    centres: Tensor
    radius: float
    restart_radii: Tensor
    evaluations: int


def random_starts(region: Region, n: int, restarts: int, generator: torch.Generator) -> Tensor:
    """[restarts, n, 2] centres drawn uniformly from K (on the generator's device)."""
    check_count("n", n)
    check_count("restarts", restarts)
    return region.to(generator.device).sample(restarts * n, generator).reshape(restarts, n, 2)


def restarts_needed(restart_radii: Tensor, target: float) -> int | None:
    """Fewest leading restarts whose best radius is <= `target` (None if none reaches it)."""
    hits = torch.nonzero(restart_radii <= target)
    return int(hits[0, 0]) + 1 if hits.numel() else None


def smoothed_cover(
    region: Region,
    n: int,
    restarts: int = 32,
    method: SmoothedZerothOrder | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> Cover:
    """Cover `region` with `n` balls: `restarts` batched runs of `method` (defaults if None)."""
    method = method or SmoothedZerothOrder()
    generator = torch.Generator(device).manual_seed(seed)
    on_device = region.to(device)
    start = random_starts(on_device, n, restarts, generator)
    descent = method.run(lambda c: covering_radius(on_device, c), start, generator)
    best = int(descent.radius.argmin())
    return Cover(
        descent.centres[best].cpu(),
        float(descent.radius[best]),
        descent.radius.cpu(),
        restarts * descent.evaluations,
    )
