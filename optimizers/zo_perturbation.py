"""Seeded random directions regenerated on demand, and in-place perturbations undone bit for bit.

A direction is never stored: `SeededDirection` draws it parameter by parameter from a generator
seeded per direction (one generator per device, parameters in a fixed order), so moving the
weights, moving them back and applying the update all regenerate the same numbers (MeZO's trick).

In floating point, (w + d) - d is not always w (about 3 % of float32 entries for |d| ~ 1e-2 |w|,
and w is lost entirely where |d| >> |w|). `perturbed` therefore records, while it moves w, the
few entries whose subtraction would not give w back, as (flat index, original value) pairs, and
rewrites them on the way back: restoration is exact (`torch.equal`) without a copy of the weights.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal

import numpy as np
import torch

DirectionKind = Literal["sphere", "gaussian"]


def derive_seed(*words: int) -> int:
    """A 63-bit seed from integers (seed, step, rank, direction, ...), well mixed by numpy's
    SeedSequence, so nearby tuples give unrelated streams."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 1)


class SeededDirection:
    """A direction v over `params` drawn from `seed`: Gaussian z (E[z z^T] = I, MeZO) or uniform
    on the sphere of radius sqrt(d) (E[v v^T] = I, Ma & Huang), d the number of entries."""

    def __init__(self, params: list[torch.Tensor], seed: int, kind: DirectionKind) -> None:
        self.params, self.seed, self.kind = params, seed, kind
        self.radius_scale = 1.0
        if kind == "sphere":
            squares = sum(float(z.double().square().sum()) for _, z in self._raw())
            dimension = sum(p.numel() for p in params)
            self.radius_scale = (dimension / squares) ** 0.5

    def _raw(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        generators: dict[torch.device, torch.Generator] = {}
        for p in self.params:
            if p.device not in generators:
                generators[p.device] = torch.Generator(device=p.device).manual_seed(self.seed)
            z = torch.randn(p.shape, generator=generators[p.device], device=p.device, dtype=p.dtype)
            yield p, z

    def scaled(self, scale: float) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """(parameter, scale * v restricted to it), one parameter at a time."""
        for p, z in self._raw():
            yield p, z.mul_(scale * self.radius_scale)


@contextlib.contextmanager
def perturbed(direction: SeededDirection, offset: float) -> Iterator[int]:
    """Weights at w + offset * v inside the block, exactly w again after it; yields the number
    of entries whose restoration needed the recorded original value."""
    fixes: list[tuple[torch.Tensor, torch.Tensor]] = []
    with torch.no_grad():
        for p, step in direction.scaled(offset):
            moved = p + step
            flat = p.view(-1)
            wrong = ((moved - step) != p).view(-1).nonzero().squeeze(1)
            fixes.append((wrong, flat[wrong]))
            p.copy_(moved)
    try:
        yield sum(int(index.numel()) for index, _ in fixes)
    finally:
        with torch.no_grad():
            for (p, step), (index, original) in zip(direction.scaled(offset), fixes, strict=True):
                p.sub_(step)
                p.view(-1).index_copy_(0, index, original)
