"""Exact covering radius: equals the certified grid brute force on random configurations, gives
the known radii of known optimal covers, and is invariant under relabelling the centres."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.covering import (
    annulus,
    cloud_radius,
    comb,
    covering_radius,
    disk,
    grid_bounds,
    l_shape,
    membership_cloud,
    unit_square,
)

SETS = {"square": unit_square, "disk": disk, "L": l_shape, "comb": comb}


@settings(max_examples=25)
@given(st.sampled_from(sorted(SETS) + ["annulus"]), st.integers(1, 6), st.integers(0, 10_000))
def test_exact_radius_lies_in_the_grid_bounds(name: str, n: int, seed: int) -> None:
    """lower <= r <= upper from a dense grid (brute force), both within two grid steps of r."""
    region = annulus(1.0, 0.5) if name == "annulus" else SETS[name]()
    generator = torch.Generator().manual_seed(seed)
    centres = 2.4 * torch.rand((3, n, 2), generator=generator, dtype=torch.float64) - 1.2
    step = 0.01
    radius = covering_radius(region, centres)
    lower, upper = grid_bounds(region, centres, step)
    assert torch.all(lower <= radius + 1e-12)
    assert torch.all(radius <= upper + 1e-12)
    assert torch.all(upper - radius <= 2 * step) and torch.all(radius - lower <= 2 * step)


def test_known_optimal_covers_of_the_square() -> None:
    """n = 1: centre (1/2, 1/2) gives sqrt(2)/2; n = 4 at the quarter centres gives sqrt(2)/4;
    n = 2 at (1/2, 1/4), (1/2, 3/4) gives sqrt(5)/4."""
    square = unit_square()
    one = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    four = torch.tensor([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    two = torch.tensor([[0.5, 0.25], [0.5, 0.75]])
    assert covering_radius(square, one).item() == pytest.approx(math.sqrt(2) / 2, abs=1e-14)
    assert covering_radius(square, four).item() == pytest.approx(math.sqrt(2) / 4, abs=1e-14)
    assert covering_radius(square, two).item() == pytest.approx(math.sqrt(5) / 4, abs=1e-14)


def test_known_optimal_covers_of_the_disk() -> None:
    """n = 3 centres at radius 1/2, 120 degrees apart: sqrt(3)/2; n = 7 hexagonal: 1/2; the
    annulus with one central ball: its outer radius."""
    angles = torch.arange(3, dtype=torch.float64) * 2 * math.pi / 3
    three = 0.5 * torch.stack((angles.cos(), angles.sin()), -1)
    six = torch.arange(6, dtype=torch.float64) * math.pi / 3
    ring = math.sqrt(3) / 2 * torch.stack((six.cos(), six.sin()), -1)
    seven = torch.cat((torch.zeros(1, 2, dtype=torch.float64), ring))
    assert covering_radius(disk(), three).item() == pytest.approx(math.sqrt(3) / 2, abs=1e-12)
    assert covering_radius(disk(), seven).item() == pytest.approx(0.5, abs=1e-12)
    origin = torch.zeros(1, 2, dtype=torch.float64)
    assert covering_radius(annulus(1.0, 0.5), origin).item() == pytest.approx(1.0, abs=1e-14)


@settings(max_examples=20)
@given(st.integers(2, 6), st.integers(0, 10_000))
def test_radius_ignores_the_order_of_centres(n: int, seed: int) -> None:
    """Permuting the centres leaves r unchanged; the batch evaluates like single calls."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.rand((4, n, 2), generator=generator, dtype=torch.float64)
    permuted = centres[:, torch.randperm(n, generator=generator)]
    together = covering_radius(comb(), centres)
    assert torch.allclose(together, covering_radius(comb(), permuted), atol=1e-13)
    singles = torch.stack([covering_radius(comb(), c) for c in centres])
    assert torch.allclose(together, singles, atol=1e-13)


def test_cloud_and_membership_radius_match_brute_force() -> None:
    """Cloud radius = max over points of the min distance (hand loop); the membership cloud of the
    unit disk at step 0.01 bounds the exact disk radius within 0.01 * sqrt(2) / 2."""
    points = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    centres = torch.tensor([[0.0, 0.5], [1.0, 0.0]], dtype=torch.float64)
    assert cloud_radius(points, centres).item() == pytest.approx(1.5)
    cloud = membership_cloud(lambda p: (p * p).sum(-1) <= 1.0, (-1.0, -1.0, 1.0, 1.0), 0.01)
    angles = torch.arange(3, dtype=torch.float64) * 2 * math.pi / 3
    three = 0.5 * torch.stack((angles.cos(), angles.sin()), -1)
    exact = covering_radius(disk(), three).item()
    assert exact - 0.01 * math.sqrt(2) / 2 <= cloud_radius(cloud, three).item() <= exact + 1e-12


def test_radius_runs_on_the_device(device: str) -> None:
    """The exact radius on `device` equals the CPU value."""
    centres = torch.rand((5, 4, 2), generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    here = covering_radius(l_shape(), centres)
    there = covering_radius(l_shape(), centres.to(device))
    assert there.device.type == device
    assert torch.allclose(here, there.cpu(), atol=1e-12)
