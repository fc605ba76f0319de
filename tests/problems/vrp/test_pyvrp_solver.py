"""PyVRP reference solver: all 16 variants, brute-force optima, strict backhauls, bad input."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import fields

import numpy as np
import pytest
import torch

from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.pyvrp_solver import DEFAULT_ITERATIONS, PyVRPSolver
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.validator import InfeasibleSolution, validate
from optiforge.problems.vrp.variants import ALL_VARIANTS, Variant

NUM_CUSTOMERS = 6
SCALE = 100_000
ITERATIONS = 300  # enough for the brute-force optimum of every 6-customer instance here
WINDOW_SPREAD, WINDOW_WIDTH, LIMIT_MARGIN = 2.0, 0.25, 0.1


def tiny_instance(spec: Variant, seed: int, mixed: bool = False) -> VRPBatch:
    """6 customers in the unit square, demands 1-9, capacity 15 (so 2-4 routes); customers 2
    and 5 are backhauls with B; windows of width 0.25 starting up to 2 after the direct arrival,
    service 0.1 and depot window [0, 4] with TW; with L a limit 0.1 above the longest direct
    route (out and back, or out only when open)."""
    gen = torch.Generator().manual_seed(seed)
    n = NUM_CUSTOMERS
    locs = torch.rand(1, n + 1, 2, generator=gen)
    demand = torch.randint(1, 10, (1, n + 1), generator=gen).float()
    demand[:, 0] = 0
    is_backhaul = torch.zeros(1, n + 1, dtype=torch.bool)
    if spec.backhaul:
        is_backhaul[0, [2, 5]] = True
    direct = (locs[0] - locs[0, 0]).norm(dim=-1)
    windows = torch.tensor([0.0, math.inf]).repeat(1, n + 1, 1)
    service = torch.zeros(1, n + 1)
    if spec.time_windows:
        early = direct + WINDOW_SPREAD * torch.rand(n + 1, generator=gen)
        windows = torch.stack([early, early + WINDOW_WIDTH], -1)[None]
        windows[0, 0] = torch.tensor([0.0, 4.0])
        service[0, 1:] = 0.1
    legs = 1 if spec.open_route else 2
    limit = float(legs * direct.max() + LIMIT_MARGIN) if spec.distance_limit else math.inf
    batch = VRPBatch(
        locs=locs,
        linehaul_demand=torch.where(is_backhaul, 0.0, demand),
        backhaul_demand=torch.where(is_backhaul, demand, 0.0),
        capacity=torch.full((1,), 15.0),
        time_windows=windows,
        service_time=service,
        distance_limit=torch.tensor([limit]),
        open_route=torch.tensor([spec.open_route]),
        mixed_backhaul=torch.tensor([mixed]),
        signed_load=torch.tensor([False]),
    )
    batch.check(spec.name)
    return batch


def sub_instance(arrays: dict[str, np.ndarray], nodes: list[int]) -> dict[str, np.ndarray]:
    """One instance's field arrays restricted to `nodes` (the depot first), renumbered."""
    per_node = ("locs", "linehaul_demand", "backhaul_demand", "time_windows", "service_time")
    return {f: a[nodes] if f in per_node else a for f, a in arrays.items()}


def brute_force(batch: VRPBatch) -> tuple[float, list[int]]:
    """Optimal cost and solution: every order of the customers split optimally into consecutive
    routes (every solution is an order split into routes); each route within the capacity is
    judged by the validator on the instance restricted to the depot and that route."""
    n = batch.num_nodes - 1
    arrays = {f.name: getattr(batch, f.name)[0].double().numpy() for f in fields(batch)}
    route_costs: dict[tuple[int, ...], float] = {}

    def route_cost(route: tuple[int, ...]) -> float:
        if route not in route_costs:
            sub = sub_instance(arrays, [0, *route])
            # more linehaul or backhaul demand than the capacity fails in every variant: no
            # need to ask the validator (it would say the same, thousands of times)
            over = max(sub["linehaul_demand"].sum(), sub["backhaul_demand"].sum())
            if over > arrays["capacity"]:
                route_costs[route] = math.inf
                return math.inf
            try:
                route_costs[route] = validate(sub, [0, *range(1, len(route) + 1), 0])
            except InfeasibleSolution:
                route_costs[route] = math.inf
        return route_costs[route]

    best, best_solution = math.inf, [0]
    for order in itertools.permutations(range(1, n + 1)):
        cost = [0.0] + [math.inf] * n  # cost[k]: best split of the first k customers
        cut = [0] * (n + 1)
        for end in range(1, n + 1):
            for start in range(end):
                value = cost[start] + route_cost(order[start:end])
                if value < cost[end]:
                    cost[end], cut[end] = value, start
        if cost[n] < best:
            best, end, routes = cost[n], n, []
            while end > 0:
                routes.insert(0, [*order[cut[end] : end], 0])
                end = cut[end]
            best_solution = [0, *itertools.chain.from_iterable(routes)]
    return best, best_solution


@functools.cache
def tiny_optimum(name: str, mixed: bool = False) -> float:
    """The brute-force optimum of the seed-3 tiny instance of a variant (computed once per
    worker: two tests use it)."""
    return brute_force(tiny_instance(ALL_VARIANTS[name], seed=3, mixed=mixed))[0]


@pytest.mark.xdist_group("tiny_optima")
@pytest.mark.parametrize("name", list(ALL_VARIANTS))
def test_every_variant_matches_brute_force(name: str) -> None:
    """Each of the 16 variants on a 6-customer instance: PyVRP's solution is valid and its
    float cost equals the brute-force optimum within the rounding bound 2 x arcs / scale."""
    batch = tiny_instance(ALL_VARIANTS[name], seed=3)
    (solution,) = PyVRPSolver(iterations=ITERATIONS, scale=SCALE).solve(batch)
    assert solution.iterations == ITERATIONS
    assert validate(batch, solution.sequence) == pytest.approx(solution.cost, abs=1e-9)
    arcs = len(solution.sequence) - 1
    assert abs(solution.cost - tiny_optimum(name)) <= 2 * arcs / SCALE


@pytest.mark.xdist_group("tiny_optima")
def test_constraints_bind_on_the_tiny_instances() -> None:
    """The brute-force optimum grows when L, TW or strict backhauls are switched on."""
    names = ["CVRP", "VRPL", "VRPTW", "VRPLTW", "OVRP", "OVRPL", "OVRPTW", "OVRPLTW", "VRPB"]
    optimum = {name: tiny_optimum(name) for name in names}
    for base, prefix in (("CVRP", ""), ("OVRP", "O")):
        for constrained in ("L", "TW", "LTW"):
            assert optimum[prefix + "VRP" + constrained] > optimum[base] + 1e-3
    assert tiny_optimum("VRPB", mixed=True) < optimum["VRPB"] - 1e-3


@pytest.mark.parametrize("name", ["VRPB", "OVRPBTW"])
def test_strict_backhaul_precedence(name: str) -> None:
    """Strict: in every route no linehaul follows a backhaul; mixed reaches the lower mixed
    optimum, so the forbidden arcs are what keeps the strict solution ordered."""
    batch = tiny_instance(ALL_VARIANTS[name], seed=3)
    (strict,) = PyVRPSolver(iterations=ITERATIONS).solve(batch)
    is_backhaul = batch.backhaul_demand[0] > 0
    for route in split_routes(strict.sequence):
        flags = [bool(is_backhaul[node]) for node in route]
        assert flags == sorted(flags)
    mixed_batch = tiny_instance(ALL_VARIANTS[name], seed=3, mixed=True)
    (mixed,) = PyVRPSolver(iterations=ITERATIONS).solve(mixed_batch)
    optimum, _ = brute_force(mixed_batch)
    assert mixed.cost == pytest.approx(optimum, abs=2 * len(mixed.sequence) / SCALE)
    assert mixed.cost < strict.cost - 1e-3


def test_workers_and_batch_order() -> None:
    """Two worker processes return the same solutions as one, in batch order."""
    rows = [
        tiny_instance(ALL_VARIANTS[name], seed=seed)
        for seed, name in enumerate(["CVRP", "VRPTW", "OVRPB"])
    ]
    batch = VRPBatch(*(torch.cat([getattr(r, f.name) for r in rows]) for f in fields(VRPBatch)))
    serial = PyVRPSolver(iterations=ITERATIONS).solve(batch)
    parallel = PyVRPSolver(iterations=ITERATIONS, num_workers=2).solve(batch)
    assert [s.cost for s in serial] == pytest.approx([p.cost for p in parallel], abs=1e-9)
    for row, solution in enumerate(serial):
        assert solution.cost == pytest.approx(brute_force(batch.index(row))[0], abs=1e-3)


def test_same_seed_and_budget_give_the_same_solutions() -> None:
    """Two solves with one seed and iteration budget return identical sequences and costs on
    n = 50 (the search stops on iterations, not on the clock); the budget is what ran."""
    batch = generate(["CVRP", "VRPTW"], 50, 2, seed=5)
    first, second = (PyVRPSolver(iterations=200, seed=7).solve(batch) for _ in range(2))
    assert [s.cost for s in first] == [s.cost for s in second]
    for one, two in zip(first, second, strict=True):
        np.testing.assert_array_equal(one.sequence, two.sequence)
        assert one.iterations == two.iterations == 200
        assert one.seconds > 0
    assert PyVRPSolver().iterations == DEFAULT_ITERATIONS == 1000


def test_bad_arguments_name_the_field() -> None:
    """A budget below one iteration or not an integer, zero workers or scale raise naming the
    argument."""
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=r"^iterations must be an integer >= 1"):
            PyVRPSolver(iterations=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_workers"):
        PyVRPSolver(num_workers=0)
    with pytest.raises(ValueError, match="scale"):
        PyVRPSolver(scale=0)


def pickup_after_small_delivery(signed: bool) -> VRPBatch:
    """Capacity 10; customer 1 delivers 1 and customer 2, beside it far from the depot, picks
    up 9: one route [1, 2] is strict-feasible but picks up 9 > 1 delivered (signed-invalid)."""
    return VRPBatch(
        locs=torch.tensor([[[0.0, 0.0], [1.0, 1.0], [1.0, 0.99]]]),
        linehaul_demand=torch.tensor([[0.0, 1.0, 0.0]]),
        backhaul_demand=torch.tensor([[0.0, 0.0, 9.0]]),
        capacity=torch.tensor([10.0]),
        time_windows=torch.tensor([[[0.0, math.inf]] * 3]),
        service_time=torch.zeros(1, 3),
        distance_limit=torch.tensor([math.inf]),
        open_route=torch.tensor([False]),
        mixed_backhaul=torch.tensor([False]),
        signed_load=torch.tensor([signed]),
    )


def test_signed_load_is_solved_as_strict_then_repaired(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signed instance is solved with linehaul-first backhauls; its strict optimum [1, 2]
    picks up 9 > 1 delivered, so the repair moves customer 2 to a route of its own: [1], [2],
    cost 2 sqrt(2) + 2 |(1, 0.99)|, valid. The same instance without the flag keeps the strict
    optimum. On generated instances of the backhaul variants every solution passes the
    validator as given (MVMoE's driving order); without the signed search it stays
    linehaul-first, with it it is never longer. Without the repair, the invalid solution is
    warned about and costs NaN (the safety net stays)."""
    (signed,) = PyVRPSolver(iterations=50).solve(pickup_after_small_delivery(True))
    assert [int(c) for c in signed.sequence] == [0, 1, 0, 2, 0]
    assert signed.cost == pytest.approx(2 * math.sqrt(2) + 2 * math.hypot(1.0, 0.99), abs=1e-6)
    (strict,) = PyVRPSolver(iterations=50).solve(pickup_after_small_delivery(False))
    assert strict.cost == pytest.approx(math.sqrt(2) + 0.01 + math.hypot(1.0, 0.99), abs=1e-4)
    for name in ("VRPB", "OVRPBLTW"):
        batch = generate(name, 12, 4, seed=1, convention="mvmoe")
        solutions = PyVRPSolver(iterations=50, signed_rounds=0).solve(batch)
        searched = PyVRPSolver(iterations=50).solve(batch)
        for row, (solution, better) in enumerate(zip(solutions, searched, strict=True)):
            assert solution.cost == pytest.approx(validate(batch.index(row), solution.sequence))
            assert better.cost == pytest.approx(validate(batch.index(row), better.sequence))
            assert better.cost <= solution.cost + 1e-9
            for route in split_routes(solution.sequence):
                flags = [bool(batch.backhaul_demand[row, node] > 0) for node in route]
                assert flags == sorted(flags)
    from optiforge.problems.vrp import pyvrp_solver

    monkeypatch.setattr(pyvrp_solver, "repair_signed_routes", lambda sequence, *_: sequence)
    with pytest.warns(
        UserWarning, match=r"PyVRP: infeasible solution: .*picked up 9 > delivered 1"
    ):
        (unrepaired,) = PyVRPSolver(iterations=50).solve(pickup_after_small_delivery(True))
    assert math.isnan(unrepaired.cost) and [int(c) for c in unrepaired.sequence] == [0, 1, 2, 0]


def test_bad_signed_rounds_are_refused() -> None:
    """signed_rounds must be None or an integer >= 0; None means 4 x iterations."""
    assert PyVRPSolver(iterations=30).signed_rounds == 120
    with pytest.raises(ValueError, match="signed_rounds must be None or an integer >= 0"):
        PyVRPSolver(signed_rounds=-1)


def test_an_invalid_solution_of_an_exact_model_still_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the signed flag PyVRP models the rules exactly, so an invalid solution (here a
    forged one that skips customer 2) is a bug and raises instead of costing NaN."""
    from optiforge.problems.vrp import pyvrp_solver

    def forged(arrays: dict[str, np.ndarray], *args: object) -> pyvrp_solver.PyVRPSolution:
        return pyvrp_solver.PyVRPSolution(np.array([0, 1, 0]), 1.0, 1, 0.0)

    monkeypatch.setattr(pyvrp_solver, "solve_arrays", forged)
    with pytest.raises(InfeasibleSolution, match=r"^instance 0: visits: customer 2 visited 0"):
        PyVRPSolver(iterations=1).solve(pickup_after_small_delivery(False))
    with pytest.warns(UserWarning, match="visited 0 times"):
        (signed,) = PyVRPSolver(iterations=1).solve(pickup_after_small_delivery(True))
    assert math.isnan(signed.cost)


@pytest.mark.parametrize("name", ["CVRP", "OVRPTW", "VRPB"])
def test_problem_data_holds_the_scaled_arc_lengths(name: str) -> None:
    """The distance and duration matrices are the Euclidean lengths x scale rounded up, 0 on
    the diagonal and, on open routes, into the depot; strict backhauls forbid backhaul ->
    linehaul arcs with MAX_VALUE."""
    from pyvrp.constants import MAX_VALUE

    from optiforge.problems.vrp.arrays import instance_arrays
    from optiforge.problems.vrp.pyvrp_solver import problem_data

    arrays = instance_arrays(generate(name, 6, 1, seed=3), 0)
    data = problem_data(arrays, 1000)
    locs = arrays["locs"].astype(np.float64)
    expected = np.zeros((7, 7), dtype=np.int64)
    for i, j in itertools.permutations(range(7), 2):
        expected[i, j] = math.ceil(math.dist(locs[i], locs[j]) * 1000 - 1e-6)
        if name.startswith("O") and j == 0:
            expected[i, j] = 0
        backhaul = arrays["backhaul_demand"]
        if name == "VRPB" and backhaul[i] > 0 and j > 0 and backhaul[j] == 0:
            expected[i, j] = MAX_VALUE
    assert np.array_equal(data.distance_matrix(0), expected)
    assert np.array_equal(data.duration_matrix(0), expected)
    assert data.num_clients == 6 and data.num_depots == 1
    assert name != "VRPB" or (expected == MAX_VALUE).any(), "no backhaul -> linehaul arc drawn"
