"""Uniform preference vectors: the Das-Dennis simplex lattice and uniform random draws."""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor


def simplex_lattice(num_obj: int, partitions: int) -> Tensor:
    """All points of the simplex with coordinates in {0, 1/p, ..., 1}: `[C(p+M-1, M-1), M]`."""
    if num_obj < 2:
        raise ValueError(f"num_obj must be >= 2, got {num_obj}")
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    rows = [
        [b - a - 1 for a, b in zip((-1, *cuts), (*cuts, partitions + num_obj - 1), strict=True)]
        for cuts in itertools.combinations(range(partitions + num_obj - 1), num_obj - 1)
    ]
    return torch.tensor(rows, dtype=torch.float64) / partitions


def lattice_near(num_obj: int, num_points: int) -> Tensor:
    """The simplex lattice with the largest partition count giving at most `num_points` points
    (at least one partition)."""
    partitions = 1
    while math.comb(partitions + num_obj, num_obj - 1) <= num_points:
        partitions += 1
    return simplex_lattice(num_obj, partitions)


def uniform_simplex(count: int, num_obj: int, generator: torch.Generator) -> Tensor:
    """`count` preferences uniform on the simplex (normalised exponentials), on the generator's
    device: `[count, M]`."""
    draws = -torch.log(torch.rand(count, num_obj, generator=generator, device=generator.device))
    return draws / draws.sum(dim=1, keepdim=True)
