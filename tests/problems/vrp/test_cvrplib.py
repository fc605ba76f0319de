"""Loading the real VRPLIB benchmarks, their rounding conventions and the model-unit view."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from problems.vrp.cvrplib import (
    bks_sequence,
    distance_matrix,
    gap_to_bks,
    instance_names,
    load_instance,
    route_cost,
    to_batch,
)
from problems.vrp.validator import InfeasibleSolution, validate


def test_x_n101_k25_bks_cost() -> None:
    """X-n101-k25: 100 customers, capacity 206, 26 BKS routes costing 27591 in rounded units."""
    instance = load_instance("CVRP", "X-n101-k25")
    assert instance.num_customers == 100
    assert instance.capacity == 206
    assert instance.bks_cost == 27591
    assert len(instance.bks_routes) == 26
    assert route_cost(instance, instance.bks_routes) == 27591
    assert gap_to_bks(route_cost(instance, instance.bks_routes), instance.bks_cost) == 0.0


def test_x_n101_k25_bks_is_capacity_feasible() -> None:
    """Every BKS route of X-n101-k25 carries at most the capacity."""
    instance = load_instance("CVRP", "X-n101-k25")
    loads = [instance.linehaul_demand[route].sum() for route in instance.bks_routes]
    assert max(loads) <= 206


def test_x_n101_k25_normalized_batch() -> None:
    """Model units: coordinates in [0, 1] touching both ends, raw demands, no TW or limit;
    unrounded distances are the instance's divided by its bounding-box side."""
    instance = load_instance("CVRP", "X-n101-k25")
    batch = to_batch(instance)
    assert batch.locs.shape == (1, 101, 2)
    assert float(batch.locs.min()) == 0.0 and float(batch.locs.max()) == 1.0
    assert batch.capacity.tolist() == [206.0]
    assert batch.linehaul_demand[0].tolist() == instance.linehaul_demand.tolist()
    assert not torch.isfinite(batch.time_windows[..., 1]).any()
    raw = np.hypot(*(instance.coords[0] - instance.coords[1]))
    assert float(batch.distances()[0, 0, 1]) == pytest.approx(raw / instance.scale, rel=1e-6)


def test_x_n101_k25_bks_validates_on_normalized_instance() -> None:
    """The independent validator accepts the BKS of X-n101-k25 and of the strict VRPB
    X-n1001-50-k22 on the model-unit instances; cost x scale is the unrounded length
    (27598.40 vs rounded 27591, within half a unit per arc; 49675.73 vs 49635)."""
    instance = load_instance("CVRP", "X-n101-k25")
    cost = validate(to_batch(instance), bks_sequence(instance), name=instance.name)
    arcs = len(bks_sequence(instance)) - 1
    assert abs(cost * instance.scale - 27591) <= 0.5 * arcs
    assert cost * instance.scale == pytest.approx(27598.40, abs=0.01)
    backhaul = load_instance("VRPB", "X-n1001-50-k22")
    cost = validate(to_batch(backhaul), bks_sequence(backhaul), name=backhaul.name)
    assert cost * backhaul.scale == pytest.approx(49675.73, abs=0.01)


def test_vrpb_bks_cost_with_colon_and_strict_order() -> None:
    """X-n1001-50-k22 (VRPB, "Cost: 49635"): the BKS reproduces and serves linehauls first."""
    instance = load_instance("VRPB", "X-n1001-50-k22")
    assert instance.bks_cost == 49635
    assert route_cost(instance, instance.bks_routes) == 49635
    assert int((instance.backhaul_demand > 0).sum()) == 500
    for route in instance.bks_routes:
        is_backhaul = instance.backhaul_demand[route] > 0
        assert list(is_backhaul) == sorted(is_backhaul)


def test_vrptw_dimacs_truncation() -> None:
    """C1_10_1: DIMACS one-decimal truncation reproduces 42444.8; nearest-integer would not."""
    instance = load_instance("VRPTW", "C1_10_1")
    assert instance.bks_cost == pytest.approx(42444.8)
    assert route_cost(instance, instance.bks_routes) == pytest.approx(42444.8, abs=1e-9)
    assert instance.num_vehicles == 250
    assert instance.service_time[0] == 0 and instance.service_time[1] == 90
    lengths = distance_matrix(instance)
    assert np.allclose(lengths * 10, np.round(lengths * 10))
    batch = to_batch(instance)
    assert float(batch.time_windows[0, 0, 1]) == pytest.approx(1824 / instance.scale)
    assert float(batch.service_time[0, 1]) == pytest.approx(90 / instance.scale)


def test_instance_counts() -> None:
    """100 Set X, 90 VRPB and 60 Gehring-Homberger instances, each with a .sol."""
    assert [len(instance_names(b)) for b in ("CVRP", "VRPB", "VRPTW")] == [100, 90, 60]


def test_bad_input_names_the_field() -> None:
    """Unknown benchmark, missing instance or folder, bad BKS and incomplete routes raise."""
    with pytest.raises(ValueError, match="benchmark must be one of"):
        load_instance("TSP", "X-n101-k25")
    with pytest.raises(FileNotFoundError, match="name: no file"):
        load_instance("CVRP", "X-n9-k1")
    with pytest.raises(FileNotFoundError, match="data_dir"):
        instance_names("CVRP", data_dir="/nonexistent")
    with pytest.raises(ValueError, match="bks must be > 0"):
        gap_to_bks(1.0, 0.0)
    instance = load_instance("CVRP", "X-n101-k25")
    with pytest.raises(ValueError, match="exactly once"):
        route_cost(instance, instance.bks_routes[1:])
    assert math.isclose(gap_to_bks(101.0, 100.0), 1.0)


def test_vrptw_bks_needs_dimacs_truncation() -> None:
    """R1_10_1's BKS (42444.8 under truncation) arrives late in model units with exact
    distances: the documented caveat, detected by the validator's time-window check."""
    instance = load_instance("VRPTW", "R1_10_1")
    assert route_cost(instance, instance.bks_routes) == pytest.approx(instance.bks_cost)
    with pytest.raises(InfeasibleSolution, match="time window"):
        validate(to_batch(instance), bks_sequence(instance), name=instance.name)
