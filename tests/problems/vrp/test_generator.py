"""Tests for the seeded random instance generator (RouteFinder conventions)."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
import torch

from optiforge.problems.vrp.generator import generate, vehicle_capacity
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.variants import ALL_VARIANTS, variant


def same(a: VRPBatch, b: VRPBatch) -> bool:
    return all(torch.equal(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))


def test_same_seed_same_batch_different_seed_different() -> None:
    """Seeds (ints or generators) reproduce the batch exactly; another seed changes it."""
    assert same(generate("mixed", 20, 8, seed=5), generate("mixed", 20, 8, seed=5))
    from_gen = generate("mixed", 20, 8, seed=torch.Generator().manual_seed(5))
    assert same(generate("mixed", 20, 8, seed=5), from_gen)
    assert not torch.equal(generate("mixed", 20, 8, seed=6).locs, from_gen.locs)


@pytest.mark.parametrize("name", list(ALL_VARIANTS))
def test_every_variant_within_ranges(name: str) -> None:
    """Coordinates, demands, capacity, windows and limit follow the documented constants."""
    n, b = 50, 16
    batch = generate(name, n, b, seed=1)
    batch.check()
    spec = variant(name)
    assert all(batch.variant_of(i) == spec for i in range(b))
    assert batch.locs.min() >= 0 and batch.locs.max() <= 1
    lh, bh = batch.linehaul_demand[:, 1:], batch.backhaul_demand[:, 1:]
    demand = lh + bh
    assert ((lh == 0) | (bh == 0)).all() and demand.min() >= 1 and demand.max() <= 9
    assert torch.equal(demand, demand.round())
    assert (batch.capacity == 40).all()
    assert bool((bh > 0).any()) == spec.backhaul
    assert (batch.open_route == spec.open_route).all() and not batch.mixed_backhaul.any()
    d0 = torch.linalg.vector_norm(batch.locs[:, 1:] - batch.locs[:, :1], dim=-1)
    if spec.distance_limit:
        low = 2 * d0.max(1).values
        assert (batch.distance_limit >= low).all()
        assert (batch.distance_limit <= torch.clamp(low + 2e-6, min=2.8)).all()
    else:
        assert torch.isinf(batch.distance_limit).all()
    windows, service = batch.time_windows, batch.service_time
    if spec.time_windows:
        assert torch.equal(windows[:, 0], torch.tensor([0.0, 4.6]).expand(b, 2))
        early, late, s = windows[:, 1:, 0], windows[:, 1:, 1], service[:, 1:]
        assert (s >= 0.15).all() and (s <= 0.18).all() and (service[:, 0] == 0).all()
        assert (late - early >= 0.18 - 1e-6).all() and (late - early <= 0.2 + 1e-6).all()
        assert (early >= d0 - 1e-6).all() and (late + s + d0 <= 4.6 + 1e-6).all()
    else:
        assert (windows[..., 0] == 0).all() and torch.isinf(windows[..., 1]).all()
        assert (service == 0).all()


def test_backhaul_share_is_about_one_fifth() -> None:
    """With backhauls on, about 20% of the customers are backhaul customers."""
    share = (generate("VRPB", 100, 64, seed=2).backhaul_demand[:, 1:] > 0).float().mean()
    assert 0.18 < float(share) < 0.22


@pytest.mark.parametrize(
    ("n", "capacity"),
    [
        (1, 30),
        (20, 30),
        (21, 34),
        (100, 50),
        (500, 130),
        (1000, 230),
        (1033, 230),
        (1034, 231),
        (2000, 260),
    ],
)
def test_vehicle_capacity(n: int, capacity: int) -> None:
    """30 + n // 5 on (20, 1000], 30 below, +1 per 33.3 customers beyond 1000."""
    assert vehicle_capacity(n) == capacity


def test_mixed_mode_covers_all_variants() -> None:
    """In "mixed" mode each attribute is on about half the time, so all 16 variants appear."""
    batch = generate("mixed", 30, 512, seed=0)
    batch.check()
    seen = {batch.variant_of(i).name for i in range(batch.batch_size)}
    assert seen == set(ALL_VARIANTS)
    assert 0.4 < float(batch.open_route.float().mean()) < 0.6


def test_list_of_variants_is_round_robin() -> None:
    """A list assigns its variants to instances in turn; mixed backhaul is an option."""
    batch = generate(["CVRP", "OVRPTW", "VRPBL"], 30, 6, seed=0, mixed_backhaul=True)
    names = [batch.variant_of(i).name for i in range(6)]
    assert names == ["CVRP", "OVRPTW", "VRPBL"] * 2
    assert batch.mixed_backhaul.all()


@pytest.mark.parametrize("n", [1, 5, 1000])
def test_extreme_sizes_pass_check(n: int) -> None:
    """Tiny and large instances are valid in every mode."""
    generate("mixed", n, 4 if n == 1000 else 64, seed=n).check()


def test_bad_arguments_raise() -> None:
    """Unknown variants and non-positive sizes raise ValueErrors naming the argument."""
    with pytest.raises(ValueError, match="variant must be one of"):
        generate("TSP", 10, 2)
    with pytest.raises(ValueError, match="num_customers"):
        generate("CVRP", 0, 2)
    with pytest.raises(ValueError, match="batch_size"):
        generate("CVRP", 10, 0)
    with pytest.raises(ValueError, match="list"):
        generate([], 10, 2)
    assert math.isinf(float(generate("CVRP", 3, 1).distance_limit[0]))
