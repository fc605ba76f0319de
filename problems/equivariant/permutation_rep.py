"""Permutation representations of the symmetric group S_n, and the orbit structure of their maps.

A permutation representation is a finite set of points that S_n permutes; R^points is the
vector space it acts on. Each representation here is a list of blocks:

- "trivial": one point, fixed by every permutation (an invariant scalar);
- "set": the n elements {0..n-1} (the standard permutation representation, R^n);
- "pairs": the n^2 ordered pairs (i, j), including i == j (R^{n x n}).

A block is a tuple of elements (length 0, 1 or 2) and a permutation g moves a point t to g(t).
A dense weight W [out points, in points] is S_n-equivariant iff it is constant on the orbits of
S_n acting on (out point, in point) pairs. Two pairs of tuples lie in the same orbit iff they come
from the same blocks and their concatenated element tuples have the same equality pattern
(S_n moves any k distinct elements to any other k distinct ones), so the orbits are enumerated
exactly, without summing over the n! group elements.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import torch

BLOCKS = ("trivial", "set", "pairs")


def equality_pattern(elements: tuple[int, ...]) -> tuple[int, ...]:
    """Canonical label of a tuple up to renaming its elements: (5, 2, 5) -> (0, 1, 0)."""
    first_seen: dict[int, int] = {}
    return tuple(first_seen.setdefault(e, len(first_seen)) for e in elements)


@dataclass(frozen=True)
class PermutationRep:
    """A permutation representation of S_n: `blocks` from BLOCKS, in order."""

    n: int
    blocks: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.n < 2:
            raise ValueError(f"n (the size of the permuted set) must be >= 2, got {self.n}")
        if not self.blocks:
            raise ValueError("a representation needs at least one block")
        unknown = [b for b in self.blocks if b not in BLOCKS]
        if unknown:
            raise ValueError(f"unknown representation blocks {unknown}; allowed: {list(BLOCKS)}")

    @classmethod
    def of(cls, n: int, blocks: Sequence[str]) -> PermutationRep:
        """The representation from a config list, e.g. PermutationRep.of(4, ["set", "set"])."""
        return cls(n, tuple(blocks))

    @cached_property
    def points(self) -> list[tuple[int, tuple[int, ...]]]:
        """(block index, element tuple) of every point, in coordinate order."""
        out: list[tuple[int, tuple[int, ...]]] = []
        for index, block in enumerate(self.blocks):
            arity = BLOCKS.index(block)
            out += [(index, t) for t in itertools.product(range(self.n), repeat=arity)]
        return out

    @property
    def dim(self) -> int:
        """Number of points (the dimension of R^points)."""
        return len(self.points)

    def permutation_matrix(self, perm: torch.Tensor) -> torch.Tensor:
        """P(g) [dim, dim] with P[g(p), p] = 1, for g given as a tensor i -> perm[i]."""
        position = {point: i for i, point in enumerate(self.points)}
        matrix = torch.zeros(self.dim, self.dim, dtype=torch.float64)
        for i, (block, t) in enumerate(self.points):
            moved = (block, tuple(int(perm[e]) for e in t))
            matrix[position[moved], i] = 1.0
        return matrix

    def fixed_points(self, perm: torch.Tensor) -> int:
        """Points a permutation fixes: the representation's character at it."""
        return sum(all(int(perm[e]) == e for e in t) for _, t in self.points)


def orbit_labels(out_rep: PermutationRep, in_rep: PermutationRep) -> tuple[torch.Tensor, int]:
    """Orbit index [out dim, in dim] of every weight entry, and the number of orbits.

    The number of orbits is the dimension of the space of equivariant maps in_rep -> out_rep.
    """
    if out_rep.n != in_rep.n:
        raise ValueError(f"representations of different groups: S_{out_rep.n} and S_{in_rep.n}")
    ids: dict[tuple, int] = {}
    labels = torch.empty(out_rep.dim, in_rep.dim, dtype=torch.long)
    for row, (out_block, out_t) in enumerate(out_rep.points):
        for col, (in_block, in_t) in enumerate(in_rep.points):
            key = (out_block, in_block, equality_pattern(out_t + in_t))
            labels[row, col] = ids.setdefault(key, len(ids))
    return labels, len(ids)


def bias_labels(rep: PermutationRep) -> tuple[torch.Tensor, int]:
    """Orbit index [dim] of every bias entry (maps from the trivial representation)."""
    labels, count = orbit_labels(rep, PermutationRep(rep.n, ("trivial",)))
    return labels[:, 0], count
