"""The ruin-and-recreate search under MVMoE's signed rule: brute-force optima, never worse,
always valid (by the independent validator) on every backhaul variant."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.signed_search import improve_signed, routes_to_sequence
from optiforge.problems.vrp.validator import InfeasibleSolution, validate
from optiforge.problems.vrp.variants import ALL_VARIANTS


def brute_force(arrays: dict[str, np.ndarray]) -> float:
    """Cheapest solution by the validator (as given) over every order and every route cut."""
    n = len(arrays["locs"]) - 1
    best = np.inf
    for order in itertools.permutations(range(1, n + 1)):
        for cuts in itertools.product([False, True], repeat=n - 1):
            seq = [0, order[0]]
            for node, cut in zip(order[1:], cuts, strict=True):
                seq += [0, node] if cut else [node]
            with contextlib.suppress(InfeasibleSolution):
                best = min(best, validate(arrays, [*seq, 0]))
    return best


def interleaving_instance() -> dict[str, np.ndarray]:
    """Capacity 10; customer 1 delivers 10, customer 2 picks up 5, customer 3 delivers 5, all
    near (1, 0): linehaul-first needs two routes (15 > 10), the signed rule allows one
    (deliver 10, pick up 5, deliver 5: the remaining capacity 0 -> 5 -> 0)."""
    return {
        "locs": np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.1], [1.1, 0.0]]),
        "linehaul_demand": np.array([0.0, 10.0, 0.0, 5.0]),
        "backhaul_demand": np.array([0.0, 0.0, 5.0, 0.0]),
        "capacity": np.array(10.0),
        "time_windows": np.array([[0.0, np.inf]] * 4),
        "service_time": np.zeros(4),
        "distance_limit": np.array(np.inf),
        "open_route": np.array(False),
        "mixed_backhaul": np.array(True),
        "signed_load": np.array(True),
    }


def test_finds_the_interleaved_optimum() -> None:
    """From the linehaul-first solution (three out-and-back routes) the search reaches the
    brute-force optimum, one interleaved route."""
    arrays = interleaving_instance()
    routes = improve_signed(arrays, [[1], [2], [3]], iterations=50)
    assert len(routes) == 1
    cost = validate(arrays, routes_to_sequence(routes))
    assert cost == pytest.approx(brute_force(arrays))
    assert cost < validate(arrays, [0, 1, 0, 3, 2, 0])  # the best linehaul-first solution


BACKHAUL_VARIANTS = [name for name in ALL_VARIANTS if "B" in name]


@pytest.mark.parametrize("name", BACKHAUL_VARIANTS)
def test_never_worse_and_always_valid(name: str) -> None:
    """On 8-customer mvmoe instances of each backhaul variant, from one customer per route, the
    result validates (routes as a set) and is no longer than the start."""
    batch = generate(name, 8, 4, seed=7, convention="mvmoe")
    for row in range(batch.batch_size):
        arrays = instance_arrays(batch, row)
        start = [[c] for c in range(1, 9)]
        start_cost = validate(arrays, routes_to_sequence(start), route_order="any")
        routes = improve_signed(arrays, start, iterations=30, seed=row)
        assert sorted(c for r in routes for c in r) == list(range(1, 9))
        cost = validate(arrays, routes_to_sequence(routes), route_order="any")
        assert cost <= start_cost + 1e-12


def test_an_infeasible_start_comes_back_unchanged() -> None:
    """A start that breaks the rule (pickup before the delivery) is returned as it is."""
    arrays = interleaving_instance()
    assert improve_signed(arrays, [[2, 1], [3]], iterations=10) == [[2, 1], [3]]


def test_same_seed_same_routes() -> None:
    """Deterministic for a seed and a budget."""
    batch = generate("OVRPBL", 20, 1, seed=3, convention="mvmoe")
    arrays = instance_arrays(batch, 0)
    start = split_routes(np.arange(0, 21).repeat(2)[1:])  # one customer per route
    assert improve_signed(arrays, start, 40, seed=5) == improve_signed(arrays, start, 40, seed=5)
