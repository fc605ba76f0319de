"""One random stream per VRP instance, so that a randomized improvement (R3C) of an instance does
not depend on which other instances share its batch, nor on its position in it.

Each instance gets a CPU `torch.Generator` seeded from a base seed and a hash of the instance's
own data (every `VRPBatch` field of its row), so the same instance gets the same draws whatever
the evaluation chunk size, batch composition or device (the draws are made on CPU and moved).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from optiforge.problems.vrp.arrays import batch_arrays
from optiforge.problems.vrp.instance import VRPBatch


def instance_generators(batch: VRPBatch, seed: int) -> list[torch.Generator]:
    """A CPU generator per instance of `batch`, seeded from `seed` and the instance's data."""
    arrays = batch_arrays(batch)
    generators = []
    for row in range(batch.batch_size):
        digest = hashlib.blake2b(np.int64(seed).tobytes(), digest_size=8)
        for name in sorted(arrays):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(arrays[name][row]).tobytes())
        key = int.from_bytes(digest.digest(), "little") & (2**63 - 1)
        generators.append(torch.Generator().manual_seed(key))
    return generators


def stream_uniform(
    generators: Sequence[torch.Generator], width: int, device: torch.device
) -> Tensor:
    """U[0, 1) float64 draws [B, width], row b from `generators[b]`, on `device`."""
    rows = [torch.rand(width, generator=g, dtype=torch.float64) for g in generators]
    return torch.stack(rows).to(device)


def uniform_integers(draws: Tensor, low: Tensor | int, high: Tensor | int) -> Tensor:
    """Integers uniform in [low, high) (per element) from U[0, 1) `draws`."""
    span = high - low
    offset = (draws * span).long()
    return low + torch.minimum(offset, torch.as_tensor(span, device=draws.device) - 1)
