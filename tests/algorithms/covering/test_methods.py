"""Smoothed zeroth-order covering, Gonzalez and Nelder-Mead: the n = 1 square converges to the
centre, seeded runs reproduce, Gonzalez follows the farthest-point rule, budgets are kept."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.algorithms.covering import (
    KNOWN_RADII,
    SmoothedZerothOrder,
    cloud_radius,
    covering_radius,
    disk,
    farthest_point,
    gonzalez_cover,
    membership_cloud,
    nelder_mead_cover,
    restarts_needed,
    smoothed_cover,
    unit_square,
)

SHORT = SmoothedZerothOrder(steps=300, samples=4)


def test_one_ball_on_the_square_converges_to_the_centre(device: str) -> None:
    """n = 1: every restart ends within 1e-3 of (1/2, 1/2), radius within 1e-3 of sqrt(2)/2."""
    cover = smoothed_cover(unit_square(), 1, restarts=4, method=SHORT, seed=3, device=device)
    assert torch.allclose(cover.centres, torch.full((1, 2), 0.5, dtype=torch.float64), atol=1e-3)
    assert cover.radius == pytest.approx(math.sqrt(2) / 2, abs=1e-3)
    assert torch.all(cover.restart_radii <= math.sqrt(2) / 2 + 1e-3)


def test_smoothed_method_reaches_the_known_two_ball_square() -> None:
    """n = 2 on the square: the best of 8 short restarts is within 1 % of sqrt(5)/4, and its
    radius is the exact radius of its centres."""
    cover = smoothed_cover(unit_square(), 2, restarts=8, method=SHORT, seed=0)
    assert cover.radius <= 1.01 * KNOWN_RADII["square"][2]
    assert cover.radius >= KNOWN_RADII["square"][2] - 1e-9  # never below the optimum
    assert covering_radius(unit_square(), cover.centres).item() == pytest.approx(cover.radius)
    assert cover.evaluations == 8 * 300 * 5


def test_descent_on_a_membership_cloud_finds_the_disk_centre() -> None:
    """A set given only by membership (the unit disk on a 0.02 grid): one ball ends at the
    origin with the cloud radius within the grid step of 1."""
    cloud = membership_cloud(lambda p: (p * p).sum(-1) <= 1.0, (-1.0, -1.0, 1.0, 1.0), 0.02)
    generator = torch.Generator().manual_seed(0)
    start = torch.rand((3, 1, 2), generator=generator, dtype=torch.float64) - 0.5
    descent = SHORT.run(lambda c: cloud_radius(cloud, c), start, generator)
    best = descent.centres[descent.radius.argmin()]
    assert torch.linalg.vector_norm(best).item() < 0.02
    assert 1.0 - 0.02 <= descent.radius.min().item() <= 1.0 + 0.02


def test_seeded_runs_reproduce() -> None:
    """The same seed gives the same centres and radii; another seed gives other starts."""
    first = smoothed_cover(disk(), 3, restarts=3, method=SHORT, seed=7)
    again = smoothed_cover(disk(), 3, restarts=3, method=SHORT, seed=7)
    other = smoothed_cover(disk(), 3, restarts=3, method=SHORT, seed=8)
    assert torch.equal(first.centres, again.centres)
    assert torch.equal(first.restart_radii, again.restart_radii)
    assert not torch.equal(first.restart_radii, other.restart_radii)


def test_farthest_point_rule_on_a_hand_made_cloud() -> None:
    """From (0, 0) on {(0,0), (1,0), (3,0), (3,1)}: picks (3,1), then (1,0) (distance 1 vs 0)."""
    points = torch.tensor([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [3.0, 1.0]], dtype=torch.float64)
    centres = farthest_point(points, 3, torch.tensor([0]))
    assert torch.equal(centres[0], points[[0, 3, 1]])


def test_gonzalez_is_within_its_factor_two_on_the_square(device: str) -> None:
    """Gonzalez's radius on the square is between the optimum and twice it (plus grid slack)."""
    for n in (1, 4):
        cover = gonzalez_cover(unit_square(), n, step=0.05, restarts=4, device=device)
        known = KNOWN_RADII["square"][n]
        assert known - 1e-9 <= cover.radius <= 2 * known + 0.05


def test_nelder_mead_keeps_its_budget() -> None:
    """Nelder-Mead restarts spend no more than the evaluations given; the radius is exact."""
    cover = nelder_mead_cover(unit_square(), 2, evaluations=600, seed=0)
    assert cover.evaluations <= 600
    assert covering_radius(unit_square(), cover.centres).item() == pytest.approx(cover.radius)


def test_restarts_needed_counts_leading_restarts() -> None:
    """The first restart at or below the target, counted from 1; None when none reaches it."""
    radii = torch.tensor([0.9, 0.8, 0.5, 0.4])
    assert restarts_needed(radii, 0.55) == 3
    assert restarts_needed(radii, 0.1) is None
