"""Seeded random directions regenerated on demand, and in-place perturbations undone bit for bit.

A direction is never stored: `SeededDirection` draws it parameter by parameter from a generator
seeded per direction (one generator per device, parameters in a fixed order), so moving the
weights, moving them back and applying the update all regenerate the same numbers (MeZO's trick).

In floating point, (w + d) - d is not always w (about 3 % of float32 entries for |d| ~ 1e-2 |w|,
and w is lost entirely where |d| >> |w|). `perturbed` therefore records, while it moves w, the
entries whose subtraction would not give w back, as (int32 index, original value) pairs (8 bytes
each; 4-8 % of the entries at MeZO's eps = 1e-3 on weights of ~0.02), and rewrites them on the
way back: restoration is exact (`torch.equal`) without a copy of the weights.
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


CHUNK = 1 << 18  # entries drawn at once: bounds the temporaries to ~1 MiB each (float32)


class SeededDirection:
    """A direction v over `params` drawn from `seed`: Gaussian z (E[z z^T] = I, MeZO) or uniform
    on the sphere of radius sqrt(d) (E[v v^T] = I, Ma & Huang), d the number of entries. It is
    drawn in chunks of at most CHUNK entries of each parameter, always in the same order."""

    def __init__(self, params: list[torch.Tensor], seed: int, kind: DirectionKind) -> None:
        self.params, self.seed, self.kind = params, seed, kind
        self.radius_scale = 1.0
        if kind == "sphere":
            squares = sum(float(torch.linalg.vector_norm(z)) ** 2 for _, _, z in self._raw())
            dimension = sum(p.numel() for p in params)
            self.radius_scale = (dimension / squares) ** 0.5

    def _raw(self) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(parameter, flat chunk of it (a view), Gaussian draw of the chunk's size)."""
        generators: dict[torch.device, torch.Generator] = {}
        for p in self.params:
            if p.device not in generators:
                generators[p.device] = torch.Generator(device=p.device).manual_seed(self.seed)
            for piece in p.view(-1).split(CHUNK):
                z = torch.randn(
                    piece.shape, generator=generators[p.device], device=p.device, dtype=p.dtype
                )
                yield p, piece, z

    def scaled(self, scale: float) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(parameter, flat chunk of it, scale * v on that chunk), one chunk at a time."""
        for p, piece, z in self._raw():
            yield p, piece, z.mul_(scale * self.radius_scale)


@contextlib.contextmanager
def perturbed(direction: SeededDirection, offset: float) -> Iterator[int]:
    """Weights at w + offset * v inside the block, exactly w again after it; yields the number
    of entries whose restoration needed the recorded original value."""
    fixes: list[tuple[torch.Tensor, torch.Tensor]] = []
    with torch.no_grad():
        for _, piece, step in direction.scaled(offset):
            back = (piece + step).sub_(step)  # what restoring will compute
            wrong = (back != piece).nonzero().squeeze(1)
            del back
            fixes.append((wrong.to(torch.int32), piece[wrong]))  # int32: chunks < 2^31
            piece.add_(step)
    try:
        yield sum(int(index.numel()) for index, _ in fixes)
    finally:
        with torch.no_grad():
            for (_, piece, step), (index, original) in zip(
                direction.scaled(offset), fixes, strict=True
            ):
                piece.sub_(step)
                piece.index_copy_(0, index.long(), original)
