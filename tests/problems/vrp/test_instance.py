"""Tests for the batched instance layout and its input checks."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch, slack_limit


def tiny_batch(batch_size: int = 2) -> VRPBatch:
    """Depot at the origin, customers at (0.3, 0) and (0, 0.4); TW, limit and backhaul on."""
    locs = torch.tensor([[0.0, 0.0], [0.3, 0.0], [0.0, 0.4]]).expand(batch_size, 3, 2)
    windows = torch.tensor([[0.0, 3.0], [0.5, 1.0], [0.0, 2.0]]).expand(batch_size, 3, 2)
    return VRPBatch(
        locs=locs.clone(),
        linehaul_demand=torch.tensor([0.0, 4.0, 0.0]).repeat(batch_size, 1),
        backhaul_demand=torch.tensor([0.0, 0.0, 3.0]).repeat(batch_size, 1),
        capacity=torch.full((batch_size,), 5.0),
        time_windows=windows.clone(),
        service_time=torch.tensor([0.0, 0.1, 0.1]).repeat(batch_size, 1),
        distance_limit=torch.full((batch_size,), 1.0),
        open_route=torch.zeros(batch_size, dtype=torch.bool),
        mixed_backhaul=torch.zeros(batch_size, dtype=torch.bool),
        signed_load=torch.zeros(batch_size, dtype=torch.bool),
    )


def with_row1(batch: VRPBatch, field: str, index: tuple[int, ...], value: float) -> VRPBatch:
    """Copy of `batch` with field[1][index] = value (instance 1 becomes the bad one)."""
    tensor = getattr(batch, field).clone()
    tensor[(1, *index)] = value
    return replace(batch, **{field: tensor})


def test_valid_batch_passes_and_reports_its_variant() -> None:
    """The tiny batch passes `check()` and uses B, L and TW."""
    batch = tiny_batch()
    batch.check()
    v = batch.variant_of(0)
    assert (v.backhaul, v.distance_limit, v.time_windows, v.open_route) == (True, True, True, False)


@pytest.mark.parametrize(
    ("field", "index", "value", "message"),
    [
        (
            "linehaul_demand",
            (1,),
            6.0,
            r"^instance 1: linehaul_demand: demand 6 of customer 1 exceeds capacity 5$",
        ),
        (
            "backhaul_demand",
            (2,),
            12.0,
            r"^instance 1: backhaul_demand: demand 12 of customer 2 exceeds capacity 5$",
        ),
        ("time_windows", (2, 1), 0.3, r"^instance 1: time_windows: customer 2: unreachable"),
        ("time_windows", (0, 1), 0.5, r"^instance 1: time_windows: customer 1: cannot return"),
        ("distance_limit", (), 0.7, r"^instance 1: distance_limit: customer 2: out and back"),
        ("distance_limit", (), 0.0, r"^instance 1: distance_limit must be > 0"),
        ("service_time", (2,), -0.1, r"^instance 1: service_time must be >= 0$"),
        ("service_time", (2,), math.inf, r"^instance 1: service_time must be finite$"),
        ("backhaul_demand", (2,), -1.0, r"^instance 1: backhaul_demand must be >= 0$"),
        ("linehaul_demand", (1,), math.nan, r"^instance 1: linehaul_demand contains NaN$"),
        ("locs", (2, 0), math.nan, r"^instance 1: locs contains NaN$"),
        ("capacity", (), math.nan, r"^instance 1: capacity contains NaN$"),
        ("capacity", (), 0.0, r"^instance 1: capacity must be > 0$"),
        ("capacity", (), math.inf, r"^instance 1: capacity must be finite$"),
        ("time_windows", (1, 1), math.nan, r"^instance 1: time_windows contains NaN$"),
        ("time_windows", (1, 0), -math.inf, r"^instance 1: time_windows earliest must be finite"),
        ("locs", (2, 0), math.inf, r"^instance 1: locs must be finite$"),
        ("backhaul_demand", (1,), 2.0, r"^instance 1: .*customer 1: a customer has both demands"),
        ("linehaul_demand", (0,), 1.0, r"^instance 1: .*depot must be 0$"),
        (
            "time_windows",
            (2, 0),
            2.5,
            r"^instance 1: time_windows: node 2: earliest > latest \(2.5 > 2\)$",
        ),
    ],
)
def test_bad_instance_is_rejected_naming_instance_and_field(
    field: str, index: tuple[int, ...], value: float, message: str
) -> None:
    """Building a malformed or hopeless instance raises one ValueError naming instance and field."""
    with pytest.raises(ValueError, match=message):
        with_row1(tiny_batch(), field, index, value)


def test_check_names_the_data() -> None:
    """A name labels a one-instance batch by itself and row b of a larger batch as name[b];
    `check()` catches an in-place edit made after construction."""
    with pytest.raises(ValueError, match=r"^X\.vrp: capacity must be > 0$"):
        VRPBatch(**{**vars(tiny_batch(1)), "capacity": torch.zeros(1)}, name="X.vrp")
    batch = tiny_batch(3)
    batch.locs[2, 1, 0] = math.nan
    with pytest.raises(ValueError, match=r"^train\[2\]: locs contains NaN$"):
        batch.check("train")
    with pytest.raises(ValueError, match=r"^instance 2: locs contains NaN$"):
        batch.check()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("capacity", torch.ones(3), r"^batch: capacity must have shape \(2,\) \(B\), got \(3,\)$"),
        ("locs", torch.zeros(2, 3), r"^batch: locs must have shape \[B, N, 2\] with N >= 2"),
        ("locs", torch.zeros(2, 1, 2), r"^batch: locs must have shape \[B, N, 2\] with N >= 2"),
        ("time_windows", torch.zeros(2, 3), r"time_windows must have shape \(2, 3, 2\)"),
        ("open_route", torch.zeros(2), r"^batch: open_route must be bool, got torch.float32$"),
        ("signed_load", torch.zeros(2), r"^batch: signed_load must be bool, got torch.float32$"),
        ("capacity", torch.ones(2, dtype=torch.long), r"capacity must be floating point"),
    ],
)
def test_wrong_shape_or_dtype_is_rejected(field: str, value: torch.Tensor, message: str) -> None:
    """A field with the wrong shape or dtype raises, naming the field and the expected shape."""
    with pytest.raises(ValueError, match=message):
        replace(tiny_batch(), **{field: value})


def test_open_routes_need_no_return() -> None:
    """An open instance may have customers it could not serve on a closed out-and-back route."""
    batch = replace(tiny_batch(), open_route=torch.ones(2, dtype=torch.bool))
    replace(batch, distance_limit=torch.full((2,), 0.5)).check()


def test_distances_are_exact_on_short_arcs() -> None:
    """The distance matrix is accurate to float32 rounding even for nearly coincident nodes."""
    locs = torch.rand(1, 40, 2, generator=torch.Generator().manual_seed(0))
    locs[0, 1] = locs[0, 0] + 1e-4
    batch = replace(generate("CVRP", 39, 1), locs=locs)
    expected = (locs.double()[:, :, None] - locs.double()[:, None]).norm(dim=-1)
    assert torch.allclose(batch.distances().double(), expected, atol=1e-6, rtol=0)


def test_index_and_slack_limit() -> None:
    """`index` keeps rows batched; `slack_limit` adds a relative tolerance and keeps inf."""
    assert tiny_batch(3).index(1).batch_size == 1
    assert tiny_batch(3).index(torch.tensor([0, 0, 2])).batch_size == 3
    slack = slack_limit(torch.tensor([0.5, 100.0, math.inf]))
    assert torch.allclose(slack, torch.tensor([0.5 + 5e-6, 100.0005, math.inf]))
