"""The signed-load repair of linehaul-first solutions (problems/vrp/signed_repair.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.vrp.pyvrp_solver import route_length
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.signed_repair import repair_signed_routes


def test_hand_computed_split() -> None:
    """Route [1, 2, 3, 4]: linehauls 1, 2 deliver 3 + 2 = 5; backhauls 3, 4 pick up 4, 2:
    4 <= 5 stays, 4 + 2 > 5 moves; route [5] (backhaul only) and [6] (linehaul only) stay."""
    linehaul = np.array([0, 3, 2, 0, 0, 0, 4], dtype=float)
    backhaul = np.array([0, 0, 0, 4, 2, 7, 0], dtype=float)
    sequence = np.array([0, 1, 2, 3, 4, 0, 5, 0, 6, 0])
    repaired = repair_signed_routes(sequence, linehaul, backhaul)
    assert repaired.tolist() == [0, 1, 2, 3, 0, 4, 0, 5, 0, 6, 0]


@settings(max_examples=60)
@given(customers=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_routes_obey_the_signed_rule_and_cost_grows_within_bounds(
    customers: int, seed: int
) -> None:
    """Random linehaul-first routes: after the repair every customer is visited once, every
    route with a linehaul has pickups <= deliveries after each customer, every route is a part
    of an original route and no longer than it,
    and the total does not shrink (triangle inequality)."""
    rng = np.random.default_rng(seed)
    is_backhaul = np.concatenate([[False], rng.random(customers) < 0.4])
    demand = np.concatenate([[0.0], rng.integers(1, 10, customers).astype(float)])
    linehaul, backhaul = np.where(is_backhaul, 0.0, demand), np.where(is_backhaul, demand, 0.0)
    locs = rng.random((customers + 1, 2))
    order = list(rng.permutation(np.arange(1, customers + 1)))
    cuts = sorted(set(rng.integers(1, customers, 3).tolist())) if customers > 1 else []
    routes = [order[a:b] for a, b in zip([0, *cuts], [*cuts, customers], strict=True)]
    routes = [sorted(r, key=lambda node: bool(is_backhaul[node])) for r in routes]
    sequence = np.array([0, *[n for r in routes for n in (*r, 0)]])
    repaired = repair_signed_routes(sequence, linehaul, backhaul)
    assert sorted(repaired[repaired > 0].tolist()) == list(range(1, customers + 1))
    for route in split_routes(repaired):
        route = list(route)
        if linehaul[route].sum() > 0:
            assert (np.cumsum(linehaul[route]) - np.cumsum(backhaul[route]) >= 0).all()
        origin = next(r for r in routes if set(route) <= set(r))
        own = route_length(locs, np.array([0, *route, 0]), False)
        assert own <= route_length(locs, np.array([0, *origin, 0]), False) + 1e-12
    before = route_length(locs, sequence, False)
    assert route_length(locs, repaired, False) >= before - 1e-12
