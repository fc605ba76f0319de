"""Tests for MVMoE's instance convention (`generate(..., convention="mvmoe")`)."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.vrp import generator_mvmoe
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.generator_mvmoe import misses_depot_close, mvmoe_capacity, mvmoe_windows
from optiforge.problems.vrp.variants import ALL_VARIANTS, variant


@pytest.mark.parametrize(
    ("depot_dist", "u", "u_width", "expected"),
    [
        (0.5, 0.5, 0.5, (0.85, 1.95)),  # a 0.5, b 2.3, centre 1.4, half-width 0.55
        (0.1, 1.0, 0.0, (0.0, 1.1)),  # centre a = 0.1, half-width 1: start clamped at 0
        (1.0, 0.0, 1.0, (1.7, 1.9)),  # centre b = 1.8, half-width 0.1
        (0.2, 0.0, 0.0, (1.6, 3.0)),  # centre b = 2.6, half-width 1: end clamped at 3
    ],
)
def test_windows_by_hand(
    depot_dist: float, u: float, u_width: float, expected: tuple[float, float]
) -> None:
    """Windows from d_0i and the two draws equal hand-computed values, clamped to [0, 3]."""
    window = mvmoe_windows(torch.tensor(depot_dist), torch.tensor(u), torch.tensor(u_width))
    np.testing.assert_allclose(window.numpy(), expected, atol=1e-6)


def test_return_check_by_hand() -> None:
    """Out and back from a customer 1.41 away misses the depot's closing time 3 (3.02), and a
    window opening at 2.5 does so 0.5 away (3.2); 1.4 away with an early window returns at 3."""
    dist = torch.tensor([[1.41, 0.3], [0.5, 0.3], [1.4, 0.3]])
    windows = torch.tensor([[[0.0, 2.0]] * 2, [[2.5, 2.9], [0.0, 2.0]], [[0.0, 2.0]] * 2])
    assert misses_depot_close(dist, windows).tolist() == [True, True, False]


def reference(seed: int, name: str, n: int, b: int) -> dict[str, np.ndarray]:
    """MVMoE's formulas in numpy from the same uniform draws `generate` takes from the seed."""
    gen = torch.Generator().manual_seed(seed)
    locs = torch.rand(b, n + 1, 2, generator=gen).double().numpy()
    u = torch.rand(2, b, n, generator=gen).double().numpy()
    demand = torch.randint(1, 10, (b, n), generator=gen).numpy().astype(float)
    order = torch.rand(b, n, generator=gen).argsort(1).numpy()
    spec = variant(name)
    t = np.linalg.norm(locs[:, 1:] - locs[:, :1], axis=-1)
    a, late = t, 3.0 - t - 0.2
    centre = (a - late) * u[0] + late
    half = (0.2 / 2 - 3.0 / 3) * u[1] + 3.0 / 3
    start, end = np.clip(centre - half, 0, 3), np.clip(centre + half, 0, 3)
    is_backhaul = np.zeros((b, n), dtype=bool)
    if spec.backhaul:
        np.put_along_axis(is_backhaul, order[:, : int(n * 0.2)], True, axis=1)
    return {
        "locs": locs,
        "linehaul": np.where(is_backhaul, 0.0, demand),
        "backhaul": np.where(is_backhaul, demand, 0.0),
        "windows": np.stack([start, end], -1),
    }


@pytest.mark.parametrize("name", ["VRPBTW", "OVRPBLTW", "VRPTW"])
def test_instances_follow_the_formulas_from_the_same_draws(name: str) -> None:
    """Coordinates, demands, backhaul sets and windows equal an independent numpy computation
    of MVMoE's formulas from the same uniform draws; capacity 40 at n = 50, limit 3."""
    n, b = 50, 8
    batch = generate(name, n, b, seed=7, convention="mvmoe")
    ref = reference(7, name, n, b)
    np.testing.assert_allclose(batch.locs.numpy(), ref["locs"], atol=1e-7)
    np.testing.assert_array_equal(batch.linehaul_demand[:, 1:].numpy(), ref["linehaul"])
    np.testing.assert_array_equal(batch.backhaul_demand[:, 1:].numpy(), ref["backhaul"])
    np.testing.assert_allclose(batch.time_windows[:, 1:].numpy(), ref["windows"], atol=1e-5)
    assert torch.equal(batch.time_windows[:, 0], torch.tensor([0.0, 3.0]).expand(b, 2))
    assert torch.equal(batch.service_time[:, 1:], torch.full((b, n), 0.2))
    assert (batch.capacity == 40).all() and batch.signed_load.all()
    limit = 3.0 if variant(name).distance_limit else float("inf")
    assert (batch.distance_limit == limit).all()


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(ALL_VARIANTS)),
    n=st.sampled_from([1, 7, 20, 50, 100, 200]),
    seed=st.integers(0, 2**31 - 1),
)
def test_invariants_for_many_seeds(name: str, n: int, seed: int) -> None:
    """Every instance: demands 1..9, capacity per size, exactly floor(0.2 n) backhauls with B,
    limit 3 with L, windows inside [0, 3] from which every customer is reached and left in time
    to get back by 3 (open routes too), neutral values where an attribute is off."""
    b = 6
    batch = generate(name, n, b, seed=seed, convention="mvmoe")
    spec = variant(name)
    assert all(batch.variant_of(i).open_route == spec.open_route for i in range(b))
    lh, bh = batch.linehaul_demand[:, 1:], batch.backhaul_demand[:, 1:]
    demand = lh + bh
    assert demand.min() >= 1 and demand.max() <= 9 and torch.equal(demand, demand.round())
    assert (batch.capacity == {1: 30, 7: 30, 20: 30, 50: 40, 100: 50, 200: 70}[n]).all()
    expected_backhauls = n // 5 if spec.backhaul else 0
    assert ((bh > 0).sum(1) == expected_backhauls).all() and ((lh == 0) | (bh == 0)).all()
    assert (batch.distance_limit == (3.0 if spec.distance_limit else float("inf"))).all()
    windows, d0 = (
        batch.time_windows,
        torch.linalg.vector_norm(batch.locs[:, 1:] - batch.locs[:, :1], dim=-1),
    )
    if spec.time_windows:
        assert windows.min() >= 0 and windows.max() <= 3
        early, late = windows[:, 1:, 0], windows[:, 1:, 1]
        assert (d0 <= late).all()
        assert (torch.maximum(d0, early) + 0.2 + d0 <= 3).all()
    else:
        assert (windows[..., 0] == 0).all() and torch.isinf(windows[..., 1]).all()
        assert (batch.service_time == 0).all()


def test_sampling_on_each_device(device: str) -> None:
    """A generator on `device` samples there; the batch is valid and seeded reruns repeat it."""
    first, again = (
        generate("mixed", 30, 64, seed=torch.Generator(device).manual_seed(3), convention="mvmoe")
        for _ in range(2)
    )
    assert first.locs.device.type == device
    assert all(torch.equal(getattr(first, f.name), getattr(again, f.name)) for f in fields(first))
    first.check()
    backhauls = (first.backhaul_demand > 0).sum(1)
    assert torch.equal(backhauls, (first.backhaul_demand > 0).any(1) * 6)  # floor(0.2 * 30)
    windows = first.time_windows[torch.isfinite(first.time_windows[:, :, 1]).all(1)]
    assert windows.numel() > 0 and windows.min() >= 0 and windows.max() <= 3


def test_failed_instances_are_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """An instance whose out-and-back route misses the closing time is replaced by a fresh
    draw; passing instances and instances without time windows keep their first draw."""
    draws = []
    real = generator_mvmoe._draw_geometry

    def first_draw_fails(b: int, n: int, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        locs, windows = real(b, n, gen)
        if not draws:  # every instance of the first draw: depot and customer 1 far apart
            locs[:, 0], locs[:, 1] = torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0])
        draws.append(b)
        return locs, windows

    monkeypatch.setattr(generator_mvmoe, "_draw_geometry", first_draw_fails)
    batch = generate(["VRPTW", "CVRP", "OVRPTW"], 5, 3, seed=0, convention="mvmoe")
    assert draws == [3, 2]  # the two TW instances were drawn again, CVRP kept its far customer
    assert batch.locs[1, 1].tolist() == [1.0, 1.0] and batch.locs[0, 1].tolist() != [1.0, 1.0]


@pytest.mark.parametrize(
    ("n", "capacity"),
    [
        *((1, 30), (19, 30), (20, 30), (49, 30), (50, 40), (60, 40), (100, 50), (199, 50)),
        *((200, 70), (201, 50), (500, 50), (1000, 50), (5000, 50)),
    ],
)
def test_capacity_rule(n: int, capacity: int) -> None:
    """MVMoE's capacities at 20/50/100/200; 50 beyond 200 (the measured rule); other sizes
    take the largest defined size below."""
    assert mvmoe_capacity(n) == capacity


def test_convention_choice() -> None:
    """The default is RouteFinder's (same batch as naming it); a bad convention, or mixed
    backhauls under mvmoe, raises one line naming the argument."""
    default = generate("mixed", 10, 8, seed=1)
    named = generate("mixed", 10, 8, seed=1, convention="routefinder")
    assert all(torch.equal(getattr(default, f.name), getattr(named, f.name)) for f in fields(named))
    assert not default.signed_load.any()
    message = r"^convention must be one of \['mvmoe', 'routefinder'\], got 'rl4co'$"
    with pytest.raises(ValueError, match=message):
        generate("CVRP", 10, 2, convention="rl4co")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^mixed_backhaul must be False with convention 'mvmoe'"):
        generate("VRPB", 10, 2, mixed_backhaul=True, convention="mvmoe")
