"""Tests for the batched instance layout and its input checks."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from problems.vrp.instance import VRPBatch, slack_limit


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
            r"instance\[1\]: linehaul_demand/backhaul_demand: customer 1: demand above capacity",
        ),
        ("time_windows", (2, 1), 0.3, r"instance\[1\]: time_windows: customer 2: unreachable"),
        ("time_windows", (0, 1), 0.5, r"instance\[1\]: time_windows: customer 1: cannot return"),
        ("distance_limit", (), 0.7, r"instance\[1\]: distance_limit: customer 2: out and back"),
        ("service_time", (2,), -0.1, r"instance\[1\]: service_time must be >= 0"),
        ("backhaul_demand", (2,), -1.0, r"instance\[1\]: backhaul_demand must be >= 0"),
        ("locs", (2, 0), math.nan, r"instance\[1\]: locs contains NaN"),
        ("capacity", (), math.nan, r"instance\[1\]: capacity contains NaN"),
        ("locs", (2, 0), math.inf, r"instance\[1\]: locs must be finite"),
        ("backhaul_demand", (1,), 2.0, r"instance\[1\]: .*customer 1: a customer has both demands"),
        ("linehaul_demand", (0,), 1.0, r"instance\[1\]: .*depot must be 0"),
        ("time_windows", (2, 0), 2.5, r"instance\[1\]: time_windows: node 2: earliest > latest"),
    ],
)
def test_bad_instance_is_rejected_naming_instance_and_field(
    field: str, index: tuple[int, ...], value: float, message: str
) -> None:
    """Each malformed or hopeless instance raises a ValueError naming the instance and field."""
    with pytest.raises(ValueError, match=message):
        with_row1(tiny_batch(), field, index, value).check(name="instance")


def test_wrong_shape_is_rejected() -> None:
    """A field with the wrong shape raises, naming the field and the expected shape."""
    batch = replace(tiny_batch(), capacity=torch.ones(3))
    with pytest.raises(ValueError, match=r"capacity must have shape \(2,\)"):
        batch.check()


def test_open_routes_need_no_return() -> None:
    """An open instance may have customers it could not serve on a closed out-and-back route."""
    batch = replace(tiny_batch(), open_route=torch.ones(2, dtype=torch.bool))
    replace(batch, distance_limit=torch.full((2,), 0.5)).check()


def test_distances_are_exact_on_short_arcs() -> None:
    """The distance matrix is accurate to float32 rounding even for nearly coincident nodes."""
    locs = torch.rand(1, 40, 2, generator=torch.Generator().manual_seed(0))
    locs[0, 1] = locs[0, 0] + 1e-4
    batch = replace(tiny_batch(1), locs=locs)
    expected = (locs.double()[:, :, None] - locs.double()[:, None]).norm(dim=-1)
    assert torch.allclose(batch.distances().double(), expected, atol=1e-6, rtol=0)


def test_index_and_slack_limit() -> None:
    """`index` keeps rows batched; `slack_limit` adds a relative tolerance and keeps inf."""
    assert tiny_batch(3).index(1).batch_size == 1
    assert tiny_batch(3).index(torch.tensor([0, 0, 2])).batch_size == 3
    slack = slack_limit(torch.tensor([0.5, 100.0, math.inf]))
    assert torch.allclose(slack, torch.tensor([0.5 + 5e-6, 100.0005, math.inf]))
