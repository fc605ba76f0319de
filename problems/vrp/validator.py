"""Independent feasibility check and cost of a VRP solution (numpy, float64, one instance).

Written apart from the env's masks on purpose: everything the project reports about a VRP
solution passes through `validate`, so a masking bug cannot hide behind itself.

Solution format: a 1-D sequence of node indices where 0 (the depot) separates routes, e.g.
[0, 3, 5, 0, 2, 1, 0]; leading, trailing and repeated zeros are allowed (the env's padded
output). Checked, with `FEASIBILITY_TOLERANCE` slack on every limit (see `instance.py`):

- visits: every customer exactly once, indices in [0, N).
- capacity: strict backhaul (default) -- the linehaul load and the backhaul load of a route are
  each at most the capacity, and no linehaul customer follows a backhaul customer in a route;
  mixed -- the vehicle leaves loaded with the route's linehaul total and the running load
  (linehaul still on board + backhaul picked up) stays within capacity after every customer;
  signed load (`signed_load`, MVMoE; `instance.py` states the rule) -- a route with a linehaul
  customer keeps 0 <= D_k - P_k <= Q after every customer k (D_k delivered, P_k picked up so
  far), a route without one picks up P <= Q. The order of the routes matters, as in MVMoE's
  env (`envs/VRPBEnv.py` and its siblings), which drives them in the order given and starts a
  route full (remaining capacity Q) while some linehaul customer is unserved: a backhaul-only
  route is then refused unless no linehaul customer follows it (`route_order="as_given"`, the
  default). `route_order="any"` judges the routes as a set (some order passes, which is the
  case iff every route passes on its own: routes with a linehaul first, backhaul-only routes
  last, `optiforge.problems.vrp.route_order`); the env's per-route masks follow that one.
- distance limit: route length, with the return leg unless the route is open, at most L +
  `FEASIBILITY_TOLERANCE` (absolute, MVMoE's `round_error_epsilon`: 3.0000147 fails at L = 3).
- time windows: travel time = distance; service starts at max(arrival, earliest) and arrival
  must be at most latest; the vehicle leaves after the service time; a closed route must be
  back by the depot's latest time. Every route starts at the depot's earliest time.
Cost: total Euclidean length of all routes; open routes do not pay the return leg.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from optiforge.problems.vrp.arrays import FIELDS, batch_arrays, instance_arrays
from optiforge.problems.vrp.instance import FEASIBILITY_TOLERANCE, VRPBatch, check_instance
from optiforge.problems.vrp.routes import split_routes

OnInfeasible = Literal["raise", "warn"]
ON_INFEASIBLE: tuple[str, ...] = ("raise", "warn")
RouteOrder = Literal["as_given", "any"]
ROUTE_ORDERS: tuple[str, ...] = ("as_given", "any")


class InfeasibleSolution(ValueError):
    """A solution that breaks a constraint; the message names instance, route and constraint."""


class _Violation(Exception):
    """Raised inside one route's check; `validate` adds the instance and route to it."""

    def __init__(self, constraint: str, detail: str) -> None:
        super().__init__(f"{constraint}: {detail}")


@dataclass(frozen=True)
class _Instance:
    """One instance as float64 numpy arrays (shapes as one row of `VRPBatch`)."""

    locs: np.ndarray
    linehaul: np.ndarray
    backhaul: np.ndarray
    capacity: float
    early: np.ndarray
    late: np.ndarray
    service: np.ndarray
    limit: float
    open_route: bool
    mixed: bool
    signed: bool


def _to_numpy(value: object) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _instance(instance: VRPBatch | Mapping[str, object]) -> _Instance:
    """Accept a one-row `VRPBatch` or a mapping of its field names to one instance's arrays."""
    if isinstance(instance, VRPBatch):
        if instance.batch_size != 1:
            raise ValueError(f"validate takes one instance, got a batch of {instance.batch_size}")
        arrays = instance_arrays(instance, 0)
    else:
        missing = [f for f in FIELDS if f not in instance]
        if missing:
            raise ValueError(f"instance is missing fields {missing}")
        arrays = {f: _to_numpy(instance[f]) for f in FIELDS}
    windows = arrays["time_windows"]
    return _Instance(
        locs=arrays["locs"],
        linehaul=arrays["linehaul_demand"],
        backhaul=arrays["backhaul_demand"],
        capacity=float(arrays["capacity"]),
        early=windows[:, 0],
        late=windows[:, 1],
        service=arrays["service_time"],
        limit=float(arrays["distance_limit"]),
        open_route=bool(arrays["open_route"]),
        mixed=bool(arrays["mixed_backhaul"]),
        signed=bool(arrays["signed_load"]),
    )


def _within(value: float, limit: float) -> bool:
    return value <= limit + FEASIBILITY_TOLERANCE * max(1.0, abs(limit))


def _within_absolute(value: float, limit: float) -> bool:
    """MVMoE's route-length check: `length > limit + 1e-5` is refused, whatever the limit."""
    return value <= limit + FEASIBILITY_TOLERANCE


def _signed_load(
    inst: _Instance, has_linehaul: bool, delivered: float, picked: float, node: int
) -> None:
    """MVMoE's signed rule after a customer, in its terms: the remaining capacity L = Q - D + P
    (a route with a linehaul customer) or L = P (a pure-backhaul route) must lie in [0, Q]."""
    cap = inst.capacity
    checks = [(picked, cap, f"backhaul load {picked:g} > {cap:g}")]
    if has_linehaul:
        checks = [
            (picked - delivered, 0.0, f"picked up {picked:g} > delivered {delivered:g}"),
            (delivered - picked, cap, f"delivered - picked up {delivered - picked:g} > {cap:g}"),
        ]
    for value, limit, detail in checks:
        if not _within(value, limit):
            raise _Violation("capacity", f"signed load: {detail} after customer {node}")


def _route_cost(inst: _Instance, route: list[int]) -> float:
    """Check one route's capacity, precedence, time and length; return its cost."""
    cap = inst.capacity
    linehaul_total = float(sum(inst.linehaul[i] for i in route))
    mixed, strict = inst.mixed and not inst.signed, not inst.mixed and not inst.signed
    has_linehaul = linehaul_total > 0
    if mixed and not _within(linehaul_total, cap):
        raise _Violation(
            "capacity", f"leaves the depot with linehaul load {linehaul_total:g} > {cap:g}"
        )
    delivered = picked = 0.0
    seen_backhaul = False
    pos, time, length = 0, inst.early[0], 0.0
    for node in route:
        step = float(np.linalg.norm(inst.locs[node] - inst.locs[pos]))
        length += step
        time += step
        if not _within(time, inst.late[node]):
            raise _Violation(
                "time window", f"arrives at customer {node} at {time:.6g} > {inst.late[node]:.6g}"
            )
        time = max(time, inst.early[node]) + inst.service[node]
        if inst.backhaul[node] > 0:
            seen_backhaul = True
        elif inst.linehaul[node] > 0 and seen_backhaul and strict:
            raise _Violation(
                "backhaul precedence", f"linehaul customer {node} after a backhaul customer"
            )
        delivered += inst.linehaul[node]
        picked += inst.backhaul[node]
        load = linehaul_total - delivered + picked
        if mixed and not _within(load, cap):
            raise _Violation("capacity", f"load {load:g} > {cap:g} after customer {node}")
        if inst.signed:
            _signed_load(inst, has_linehaul, delivered, picked, node)
        pos = node
    if strict and not _within(delivered, cap):
        raise _Violation("capacity", f"linehaul load {delivered:g} > {cap:g}")
    if strict and not _within(picked, cap):
        raise _Violation("capacity", f"backhaul load {picked:g} > {cap:g}")
    if not inst.open_route:
        step = float(np.linalg.norm(inst.locs[0] - inst.locs[pos]))
        length += step
        time += step
        if not _within(time, inst.late[0]):
            raise _Violation(
                "depot closing time", f"back at the depot at {time:.6g} > {inst.late[0]:.6g}"
            )
    if not _within_absolute(length, inst.limit):
        raise _Violation("distance limit", f"length {length:.6g} > {inst.limit:.6g}")
    return length


def _check_route_order(route_order: str) -> None:
    if route_order not in ROUTE_ORDERS:
        raise ValueError(f"route_order must be one of {ROUTE_ORDERS}, got {route_order!r}")


def _driven_order(inst: _Instance, routes: list[list[int]]) -> None:
    """MVMoE's env on a signed instance, routes in the order given: a route leaves full while a
    linehaul customer is unserved, so a backhaul-only route must not precede a linehaul one."""
    has_linehaul = [bool(any(inst.linehaul[i] > 0 for i in route)) for route in routes]
    last = max((k for k, flag in enumerate(has_linehaul) if flag), default=-1)
    for k in range(last):
        if not has_linehaul[k] and any(inst.backhaul[i] > 0 for i in routes[k]):
            raise InfeasibleSolution(
                f"route {k} {routes[k]}: route order: backhaul-only route driven while a "
                f"linehaul customer is unserved (route {last} has one; MVMoE's env starts "
                "such a route full, so its first pickup overfills it)"
            )


def validate(
    instance: VRPBatch | Mapping[str, object],
    solution: Sequence[int] | np.ndarray | torch.Tensor,
    name: str = "instance",
    route_order: RouteOrder = "as_given",
) -> float:
    """Cost of a feasible `solution`; raise `InfeasibleSolution` naming instance/route/constraint.

    `instance` is a one-row `VRPBatch` (e.g. `batch.index(i)`) or a mapping from the
    `VRPBatch` field names to one instance's arrays (locs [N, 2], demands [N], ...).
    `route_order` (signed-load instances only): "as_given" judges the routes in the order of
    `solution` as MVMoE's env drives them; "any" accepts them if some order passes.
    """
    _check_route_order(route_order)
    check_instance(instance, name)  # bad input (NaN, demand > capacity) is no infeasibility
    inst = _instance(instance)
    num_nodes = inst.locs.shape[0]
    routes = split_routes(solution)
    counts = np.zeros(num_nodes, dtype=np.int64)
    for k, route in enumerate(routes):
        for node in route:
            if not 0 < node < num_nodes:
                raise InfeasibleSolution(
                    f"{name}: route {k} {route}: visits: node {node} not in [0, {num_nodes})"
                )
            counts[node] += 1
    for node in range(1, num_nodes):
        if counts[node] != 1:
            raise InfeasibleSolution(
                f"{name}: visits: customer {node} visited {counts[node]} times, expected once"
            )
    total = 0.0
    for k, route in enumerate(routes):
        try:
            total += _route_cost(inst, route)
        except _Violation as violation:
            raise InfeasibleSolution(f"{name}: route {k} {route}: {violation}") from None
    if inst.signed and route_order == "as_given":
        try:
            _driven_order(inst, routes)
        except InfeasibleSolution as error:
            raise InfeasibleSolution(f"{name}: {error}") from None
    return total


def validate_batch(
    batch: VRPBatch,
    solutions: Sequence[Sequence[int]] | np.ndarray | torch.Tensor,
    on_infeasible: OnInfeasible = "raise",
    solver: str = "solver",
    route_order: RouteOrder = "as_given",
) -> np.ndarray:
    """Validator costs [B] of one solution per instance (rows of a padded [B, T] array or a
    list). An infeasible solution, with `on_infeasible` "raise", raises `InfeasibleSolution`
    naming its instance; with "warn", its cost is NaN and a warning names `solver` and the
    violation (evaluation reports the feasible share and excludes the rest). `route_order` as
    in `validate`."""
    if on_infeasible not in ON_INFEASIBLE:
        raise ValueError(f"on_infeasible must be one of {ON_INFEASIBLE}, got {on_infeasible!r}")
    _check_route_order(route_order)
    if len(solutions) != batch.batch_size:
        raise ValueError(f"got {len(solutions)} solutions for {batch.batch_size} instances")
    arrays = batch_arrays(batch, np.float64)
    costs = np.full(batch.batch_size, np.nan)
    for row in range(batch.batch_size):
        instance = {name: values[row] for name, values in arrays.items()}
        try:
            costs[row] = validate(instance, solutions[row], f"instance {row}", route_order)
        except InfeasibleSolution as error:
            if on_infeasible == "raise":
                raise
            warnings.warn(f"{solver}: infeasible solution: {error}", stacklevel=2)
    return costs
