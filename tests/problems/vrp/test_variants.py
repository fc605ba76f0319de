"""Tests for the 16 VRP variants and their names."""

from __future__ import annotations

import pytest

from optiforge.problems.vrp.variants import (
    ALL_VARIANTS,
    SEEN_VARIANTS,
    UNSEEN_VARIANTS,
    Variant,
    variant,
)


def test_sixteen_distinct_variants() -> None:
    """All 2^4 attribute combinations exist once, each under its own name."""
    assert len(ALL_VARIANTS) == 16
    assert (
        len(
            {
                (v.open_route, v.backhaul, v.distance_limit, v.time_windows)
                for v in ALL_VARIANTS.values()
            }
        )
        == 16
    )
    assert all(v.name == name for name, v in ALL_VARIANTS.items())


def test_seen_and_unseen_partition_the_variants() -> None:
    """6 seen + 10 unseen variants, disjoint, covering all 16 (MVMoE split)."""
    assert set(SEEN_VARIANTS) == {"CVRP", "OVRP", "VRPB", "VRPL", "VRPTW", "OVRPTW"}
    assert len(UNSEEN_VARIANTS) == 10
    assert set(SEEN_VARIANTS) | set(UNSEEN_VARIANTS) == set(ALL_VARIANTS)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("CVRP", Variant()),
        ("OVRPBLTW", Variant(True, True, True, True)),
        ("VRPLTW", Variant(distance_limit=True, time_windows=True)),
        ("OVRPB", Variant(open_route=True, backhaul=True)),
    ],
)
def test_lookup_by_name(name: str, expected: Variant) -> None:
    """`variant(name)` returns the attributes the name spells."""
    assert variant(name) == expected


def test_unknown_name_lists_valid_names() -> None:
    """An unknown name raises a ValueError that lists the valid names."""
    with pytest.raises(ValueError, match="OVRPBLTW"):
        variant("VRPXYZ")
