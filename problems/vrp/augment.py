"""8-fold symmetry augmentation of VRP coordinates (POMO's x/y flips and x-y swap).

The eight maps of the unit square onto itself that keep it axis-aligned preserve all distances,
so every augmented copy is the same instance (same demands, windows, limits, optimal cost).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from optiforge.problems.vrp.instance import VRPBatch

# (swap x and y, then flip x -> 1 - x, flip y -> 1 - y); index 0 is the identity.
TRANSFORMS: tuple[tuple[bool, bool, bool], ...] = tuple(
    (swap, flip_x, flip_y)
    for swap in (False, True)
    for flip_x in (False, True)
    for flip_y in (False, True)
)


def augment_8(batch: VRPBatch) -> VRPBatch:
    """8 B instances; row k * B + b is instance b under TRANSFORMS[k] (locs [8B, N, 2])."""
    copies = []
    for swap, flip_x, flip_y in TRANSFORMS:
        locs = batch.locs.flip(-1) if swap else batch.locs
        x, y = locs[..., 0], locs[..., 1]
        copies.append(torch.stack([1 - x if flip_x else x, 1 - y if flip_y else y], -1))
    rows = torch.arange(batch.batch_size, device=batch.locs.device).repeat(len(TRANSFORMS))
    return replace(batch.index(rows), locs=torch.cat(copies, 0))
