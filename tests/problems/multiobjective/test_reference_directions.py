"""Simplex lattices and uniform preference draws."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.multiobjective import lattice_near, simplex_lattice, uniform_simplex


@given(num_obj=st.integers(2, 4), partitions=st.integers(1, 8))
def test_lattice_size_and_simplex(num_obj: int, partitions: int) -> None:
    """C(p + M - 1, M - 1) distinct points, each on the simplex with coordinates k / p."""
    points = simplex_lattice(num_obj, partitions)
    assert len(points) == math.comb(partitions + num_obj - 1, num_obj - 1)
    assert len(torch.unique(points, dim=0)) == len(points)
    assert torch.allclose(points.sum(1), torch.ones(len(points), dtype=torch.float64))
    scaled = points * partitions
    assert torch.allclose(scaled, scaled.round())


def test_lattice_near_and_uniform_draws() -> None:
    """The largest lattice within the count (100 points for 2 objectives, 23 partitions = 300
    points for 3); uniform draws lie on the simplex with mean 1/M."""
    assert len(lattice_near(2, 100)) == 100
    assert len(lattice_near(3, 300)) == math.comb(25, 2)
    draws = uniform_simplex(20000, 3, torch.Generator().manual_seed(0))
    assert (draws >= 0).all() and torch.allclose(draws.sum(1), torch.ones(20000))
    assert torch.allclose(draws.mean(0), torch.full((3,), 1 / 3), atol=0.01)
    with pytest.raises(ValueError, match="partitions must be >= 1"):
        simplex_lattice(2, 0)
