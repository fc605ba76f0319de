"""Bad input fails with a ValueError naming the argument: n, the set, sigma, steps, radii."""

from __future__ import annotations

import pytest
import torch

from optiforge.algorithms.covering import (
    SmoothedZerothOrder,
    annulus,
    cloud_radius,
    covering_radius,
    gonzalez_cover,
    membership_cloud,
    named,
    nelder_mead_cover,
    polygon,
    smoothed_cover,
    unit_square,
)


@pytest.mark.parametrize("n", [0, -2, 1.5, True])
def test_ball_count_below_one_fails(n: object) -> None:
    """n must be an integer >= 1 for every method."""
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        smoothed_cover(unit_square(), n, restarts=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        gonzalez_cover(unit_square(), n)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.0, -0.1, float("nan"), float("inf")])
def test_sigma_and_step_sizes_must_be_positive(value: float) -> None:
    """sigma, sigma_final, lr, lr_final must be finite and > 0."""
    for name in ("sigma", "sigma_final", "lr", "lr_final"):
        with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
            SmoothedZerothOrder(**{name: value})


def test_steps_samples_restarts_must_be_counts() -> None:
    """steps, samples, restarts and evaluations must be integers >= 1."""
    with pytest.raises(ValueError, match="steps must be"):
        SmoothedZerothOrder(steps=0)
    with pytest.raises(ValueError, match="samples must be"):
        SmoothedZerothOrder(samples=0)
    with pytest.raises(ValueError, match="restarts must be"):
        smoothed_cover(unit_square(), 2, restarts=0)
    with pytest.raises(ValueError, match="evaluations must be"):
        nelder_mead_cover(unit_square(), 2, evaluations=3)


@pytest.mark.parametrize(
    "wkt",
    [
        "POLYGON ((0 0, 1 0, 2 0, 0 0))",  # zero area
        "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))",  # self-intersecting bow tie
        "POLYGON ((0 0, inf 0, inf 1, 0 1, 0 0))",  # unbounded
        "POLYGON EMPTY",
    ],
)
def test_non_compact_or_empty_polygons_fail(wkt: str) -> None:
    """A polygon must be bounded, valid and of positive area."""
    with pytest.raises(ValueError, match="shape must be"):
        polygon(wkt)


def test_other_set_descriptions_fail_by_name() -> None:
    """Unknown set names, bad annulus radii, empty membership sets and clouds, a point, and
    centres of the wrong shape are refused."""
    with pytest.raises(ValueError, match="set must be one of"):
        named("triangle")
    with pytest.raises(ValueError, match="inner must be"):
        annulus(1.0, 1.0)
    with pytest.raises(ValueError, match="outer must be"):
        annulus(float("inf"))
    with pytest.raises(ValueError, match="contains accepts no grid point"):
        membership_cloud(lambda p: p[:, 0] > 5, (0.0, 0.0, 1.0, 1.0), 0.1)
    with pytest.raises(ValueError, match="shape must be a shapely Polygon"):
        polygon("POINT (0 0)")
    with pytest.raises(ValueError, match="points must be a non-empty"):
        cloud_radius(torch.zeros((0, 2)), torch.zeros((1, 2)))
    with pytest.raises(ValueError, match="centres must"):
        covering_radius(unit_square(), torch.zeros((0, 2)))
