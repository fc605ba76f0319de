"""Tests for the independent validator on hand-made instances with hand-computed costs."""

from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np
import pytest
import torch

from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import InfeasibleSolution, validate, validate_batch


def triangle(
    linehaul: tuple[float, float] = (5, 5),
    backhaul: tuple[float, float] = (0, 0),
    windows: tuple[tuple[float, float], ...] = ((0, math.inf),) * 3,
    service: tuple[float, float] = (0, 0),
    limit: float = math.inf,
    open_route: bool = False,
    mixed: bool = False,
    signed: bool = False,
) -> dict[str, np.ndarray]:
    """Depot (0, 0), customer 1 at (3, 0), customer 2 at (3, 4): d01 = 3, d12 = 4, d02 = 5.
    Capacity 10."""
    return {
        "locs": np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]]),
        "linehaul_demand": np.array([0.0, *linehaul]),
        "backhaul_demand": np.array([0.0, *backhaul]),
        "capacity": np.array(10.0),
        "time_windows": np.array(windows, dtype=float),
        "service_time": np.array([0.0, *service]),
        "distance_limit": np.array(limit),
        "open_route": np.array(open_route),
        "mixed_backhaul": np.array(mixed),
        "signed_load": np.array(signed),
    }


ALL_SOLUTIONS = ([0, 1, 2, 0], [0, 2, 1, 0], [0, 1, 0, 2, 0])


def optimum(instance: dict[str, np.ndarray]) -> float:
    """Brute force over every solution of the 2-customer instance."""
    costs = []
    for solution in ALL_SOLUTIONS:
        with contextlib.suppress(InfeasibleSolution):
            costs.append(validate(instance, solution))
    return min(costs)


def reject(instance: dict[str, np.ndarray], solution: list[int], message: str) -> None:
    with pytest.raises(InfeasibleSolution, match=message):
        validate(instance, solution, name="tri")


def test_cvrp_costs_and_optimum() -> None:
    """Closed routes pay the return leg; the single route 3 + 4 + 5 = 12 is optimal."""
    inst = triangle()
    assert validate(inst, [0, 1, 2, 0]) == pytest.approx(12.0)
    assert validate(inst, [0, 1, 0, 2, 0]) == pytest.approx(16.0)
    assert optimum(inst) == pytest.approx(12.0)


def test_solution_format_allows_extra_zeros() -> None:
    """Leading, trailing and repeated zeros are empty routes; no zeros at all is one route."""
    inst = triangle()
    assert validate(inst, [0, 0, 1, 0, 0, 2, 0, 0]) == pytest.approx(16.0)
    assert validate(inst, [1, 2]) == pytest.approx(12.0)
    assert validate(inst, torch.tensor([0, 2, 1, 0, 0])) == pytest.approx(12.0)


def test_visits() -> None:
    """Missing, repeated and out-of-range customers are rejected."""
    reject(triangle(), [0, 1, 0], r"tri: visits: customer 2 visited 0 times")
    reject(triangle(), [0, 1, 2, 1, 0], r"tri: visits: customer 1 visited 2 times")
    reject(triangle(), [0, 1, 2, 3, 0], r"tri: route 0 \[1, 2, 3\]: visits: node 3 not in \[0, 3\)")


def test_capacity() -> None:
    """Linehaul load 12 > 10 in one route is rejected; two routes (16) are optimal."""
    inst = triangle(linehaul=(6, 6))
    reject(inst, [0, 1, 2, 0], r"tri: route 0 \[1, 2\]: capacity: linehaul load 12 > 10")
    assert optimum(inst) == pytest.approx(16.0)


def test_open_routes_pay_no_return() -> None:
    """Open route 0-1-2 costs 3 + 4 = 7, 0-2-1 costs 9, two open routes 3 + 5 = 8."""
    inst = triangle(open_route=True)
    assert validate(inst, [0, 1, 2]) == pytest.approx(7.0)
    assert validate(inst, [0, 2, 1, 0]) == pytest.approx(9.0)
    assert validate(inst, [0, 1, 0, 2, 0]) == pytest.approx(8.0)
    assert optimum(inst) == pytest.approx(7.0)


def test_distance_limit() -> None:
    """L = 11 forbids the 12-long route (return counted); open, L = 7.5 forbids only 0-2-1."""
    reject(triangle(limit=11), [0, 1, 2, 0], r"route 0 \[1, 2\]: distance limit: length 12 > 11")
    assert optimum(triangle(limit=11)) == pytest.approx(16.0)
    inst = triangle(limit=7.5, open_route=True)
    reject(inst, [0, 2, 1, 0], r"route 0 \[2, 1\]: distance limit: length 9 > 7.5")
    assert optimum(inst) == pytest.approx(7.0)


def test_strict_backhaul_precedence_and_load() -> None:
    """Strict: no linehaul after a backhaul in a route; backhaul load within capacity."""
    inst = triangle(linehaul=(0, 5), backhaul=(5, 0))
    reject(inst, [0, 1, 2, 0], r"route 0 \[1, 2\]: backhaul precedence: linehaul customer 2")
    assert validate(inst, [0, 2, 1, 0]) == pytest.approx(12.0)
    inst = triangle(linehaul=(0, 0), backhaul=(6, 6))
    reject(inst, [0, 2, 1, 0], r"route 0 \[2, 1\]: capacity: backhaul load 12 > 10")


def test_mixed_backhaul_running_load() -> None:
    """Mixed: the vehicle leaves with the route's linehaul total; the load must stay <= Q."""
    inst = triangle(linehaul=(8, 0), backhaul=(0, 5), mixed=True)
    reject(inst, [0, 2, 1, 0], r"route 0 \[2, 1\]: capacity: load 13 > 10 after customer 2")
    assert validate(inst, [0, 1, 2, 0]) == pytest.approx(12.0)
    small = triangle(linehaul=(3, 0), backhaul=(0, 3), mixed=True)
    assert validate(small, [0, 2, 1, 0]) == pytest.approx(12.0)
    reject({**small, "mixed_backhaul": np.array(False)}, [0, 2, 1, 0], "backhaul precedence")
    reject(
        triangle(linehaul=(6, 6), mixed=True),
        [0, 1, 2, 0],
        r"route 0 \[1, 2\]: capacity: leaves the depot with linehaul load 12 > 10",
    )


def test_time_windows_count_waiting_and_service() -> None:
    """Arrive at 1 at 3, wait to 5, serve 1, reach 2 at 10 > 9.5 (8 without waiting, 9 without
    service); the other order reaches 1 at 9 > 6; only two routes are feasible."""
    inst = triangle(windows=((0, 100), (5, 6), (0, 9.5)), service=(1, 0))
    reject(inst, [0, 1, 2, 0], r"route 0 \[1, 2\]: time window: arrives at customer 2 at 10 > 9.5")
    reject(inst, [0, 2, 1, 0], r"route 0 \[2, 1\]: time window: arrives at customer 1 at 9 > 6")
    assert optimum(inst) == pytest.approx(16.0)


def test_depot_closing_time_unless_open() -> None:
    """Back at the depot at 15 > 14 is rejected for closed routes; open routes have no deadline."""
    windows = ((0, 14), (5, 6), (0, 20))
    closed = triangle(windows=windows, service=(1, 0))
    reject(
        closed, [0, 1, 2, 0], r"route 0 \[1, 2\]: depot closing time: back at the depot at 15 > 14"
    )
    assert validate(triangle(windows=windows, service=(1, 0), open_route=True), [0, 1, 2]) == 7.0


def test_tolerance_is_tiny() -> None:
    """The distance limit gets only 1e-5 slack: L = 12 - 1e-6 passes, L = 12 - 1e-3 does not."""
    assert validate(triangle(limit=12 - 1e-6), [0, 1, 2, 0]) == pytest.approx(12.0)
    reject(triangle(limit=12 - 1e-3), [0, 1, 2, 0], "distance limit")


def test_distance_limit_tolerance_is_absolute() -> None:
    """MVMoE's route-length check (`length > L + 1e-5` refused): at L = 3 a 3.0000147 route
    fails (a relative 1e-5 x L slack let it through) and a 3.000005 route passes."""

    def route_of_length(total: float) -> dict[str, np.ndarray]:
        """Depot (0, 0), customers (1, 0) and (1, y): the tour 0-1-2-0 is 1 + y + sqrt(1 + y^2)
        = total for y = ((total - 1)^2 - 1) / (2 (total - 1))."""
        y = ((total - 1) ** 2 - 1) / (2 * (total - 1))
        inst = triangle(limit=3.0)
        inst["locs"] = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, y]])
        return inst

    reject(route_of_length(3.0000147), [0, 1, 2, 0], r"distance limit: length 3.00001 > 3")
    assert validate(route_of_length(3.000005), [0, 1, 2, 0]) == pytest.approx(3.000005)


def test_unknown_route_order_is_refused() -> None:
    """An unknown route_order names the allowed ones."""
    with pytest.raises(ValueError, match=r"route_order must be one of \('as_given', 'any'\)"):
        validate(triangle(), [0, 1, 2, 0], route_order="sorted")
    with pytest.raises(ValueError, match="route_order must be one of"):
        validate_batch(VRPBatch(**batched(triangle())), [[0, 1, 2, 0]], route_order="sorted")


def batched(instance: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """One instance's arrays as a batch of one (float32, flags bool)."""
    return {
        k: torch.as_tensor(v, dtype=torch.bool if v.dtype == bool else torch.float32)[None]
        for k, v in instance.items()
    }


def test_batch_rows_and_validate_batch() -> None:
    """A VRPBatch row validates like the arrays; validate_batch names the failing instance."""
    tensors = {
        k: torch.as_tensor(v, dtype=torch.bool if v.dtype == bool else torch.float32)
        for k, v in triangle().items()
    }
    batch = VRPBatch(**{k: torch.stack([v, v]) for k, v in tensors.items()})
    assert validate(batch.index(0), [0, 1, 2, 0]) == pytest.approx(12.0)
    costs = validate_batch(batch, torch.tensor([[0, 1, 2, 0, 0], [0, 1, 0, 2, 0]]))
    np.testing.assert_allclose(costs, [12.0, 16.0])
    with pytest.raises(InfeasibleSolution, match=r"^instance 1: visits: customer 2"):
        validate_batch(batch, [[0, 1, 2, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="one instance"):
        validate(batch, [0, 1, 2, 0])


@pytest.mark.parametrize("order", list(itertools.permutations([1, 2])))
def test_cost_is_symmetric_for_closed_routes(order: tuple[int, int]) -> None:
    """Reversing a closed CVRP route keeps its length."""
    assert validate(triangle(), [0, *order, 0]) == pytest.approx(12.0)


def test_validate_batch_warns_with_nan_when_asked() -> None:
    """With on_infeasible="warn" an infeasible row costs NaN (a warning names the solver and
    the violation) while feasible rows keep their hand-computed costs; other modes raise."""
    tensors = {
        k: torch.as_tensor(v, dtype=torch.bool if v.dtype == bool else torch.float32)
        for k, v in triangle().items()
    }
    batch = VRPBatch(**{k: torch.stack([v, v]) for k, v in tensors.items()})
    solutions = torch.tensor([[0, 1, 0, 2, 0], [0, 1, 0, 0, 0]])
    with pytest.warns(UserWarning, match=r"^my solver: .*instance 1: visits: customer 2"):
        costs = validate_batch(batch, solutions, "warn", "my solver")
    assert costs[0] == pytest.approx(16.0) and math.isnan(costs[1])
    with pytest.raises(ValueError, match="on_infeasible must be one of"):
        validate_batch(batch, solutions, "ignore")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"locs": np.array([[0.0, 0.0], [np.nan, 0.0], [3.0, 4.0]])}, r"^tri: locs contains NaN$"),
        (
            {"linehaul_demand": np.array([0.0, 12.0, 5.0])},
            r"^tri: linehaul_demand: demand 12 of customer 1 exceeds capacity 10$",
        ),
        ({"backhaul_demand": np.array([0.0, -1.0, 0.0])}, r"^tri: backhaul_demand must be >= 0$"),
        ({"locs": np.zeros((3, 3))}, r"^tri: locs must have shape \[B, N, 2\]"),
        ({"service_time": np.zeros(2)}, r"^tri: service_time must have shape \(1, 3\)"),
    ],
)
def test_bad_instance_is_bad_input_not_an_infeasible_solution(
    changes: dict[str, np.ndarray], message: str
) -> None:
    """NaN, demand above capacity, negative demand or a wrong shape raise a plain ValueError
    naming instance and field (a NaN location used to read as a time-window violation)."""
    with pytest.raises(ValueError, match=message) as error:
        validate({**triangle(), **changes}, [0, 1, 2, 0], name="tri")
    assert type(error.value) is ValueError


def test_validate_batch_names_the_bad_instance() -> None:
    """A NaN location in row 1 of a batch validated row by row is reported as instance 1."""
    instance = triangle()
    batch = VRPBatch(**{k: torch.as_tensor(np.stack([v, v])) for k, v in instance.items()})
    batch.locs[1, 2, 1] = math.nan
    with pytest.raises(ValueError, match=r"^instance 1: locs contains NaN$"):
        validate_batch(batch, [[0, 1, 2, 0], [0, 1, 2, 0]], on_infeasible="warn")


def test_signed_load_by_hand() -> None:
    """Signed rule (capacity 10): a route with a linehaul keeps 0 <= delivered - picked <= 10
    after every customer; a pure-backhaul route picks up at most 10, and only after the routes
    with a linehaul (as given) or anywhere (route_order="any")."""
    inst = triangle(linehaul=(6, 0), backhaul=(0, 4), signed=True)
    assert validate(inst, [0, 1, 2, 0]) == pytest.approx(12.0)  # L: 10 -> 4 -> 8
    reject(
        inst,
        [0, 2, 1, 0],
        r"route 0 \[2, 1\]: capacity: signed load: picked up 4 > delivered 0 after customer 2",
    )
    reject(inst, [0, 2, 0, 1, 0], r"route 0 \[2\]: route order: backhaul-only route driven")
    assert validate(inst, [0, 2, 0, 1, 0], route_order="any") == pytest.approx(16.0)
    assert validate(inst, [0, 1, 0, 2, 0]) == pytest.approx(16.0)  # pure-backhaul route last
    more = triangle(linehaul=(2, 0), backhaul=(0, 5), signed=True)  # strict accepts, signed not
    assert validate({**more, "signed_load": np.array(False)}, [0, 1, 2, 0]) == pytest.approx(12.0)
    reject(more, [0, 1, 2, 0], r"picked up 5 > delivered 2 after customer 2")
    pure = triangle(linehaul=(0, 0), backhaul=(6, 4), signed=True)
    assert validate(pure, [0, 1, 2, 0]) == pytest.approx(12.0)  # L: 0 -> 6 -> 10
    reject(
        triangle(linehaul=(0, 0), backhaul=(6, 6), signed=True),
        [0, 1, 2, 0],
        r"signed load: backhaul load 12 > 10 after customer 2",
    )
    full = triangle(linehaul=(6, 6), signed=True)
    reject(full, [0, 1, 2, 0], r"signed load: delivered - picked up 12 > 10 after customer 2")
    assert optimum(full) == pytest.approx(16.0)
