"""Make a linehaul-first solution valid under MVMoE's signed load rule (`instance.py`).

PyVRP cannot express the signed rule and solves signed instances with linehaul-first backhauls
(`pyvrp_solver.py`). Such a route satisfies the rule's upper bound (its deliveries fit the
vehicle) but not always its lower one: on a route with linehauls the pickups so far must never
exceed the deliveries so far, and a linehaul-first route that delivers 3 and then picks up 9
breaks it. The repair keeps, on each such route, the longest run of its backhauls whose pickups
stay within the route's deliveries and moves the rest to a backhaul-only route of its own
(allowed under the rule: pickups <= Q, which the linehaul-first solution already guarantees).

With Euclidean distances (triangle inequality) neither new route is longer than the original
one, and no customer is reached later (waiting is allowed), so time windows and the distance
limit stay satisfied; the cost can only grow, so a repaired reference is an upper bound on the
signed optimum.
"""

from __future__ import annotations

import numpy as np


def repair_signed_routes(
    sequence: np.ndarray, linehaul_demand: np.ndarray, backhaul_demand: np.ndarray
) -> np.ndarray:
    """`sequence` (0-separated routes, linehauls first in each route) with every route's
    backhauls beyond the first overtaking pickup moved to a backhaul-only route after it."""
    nodes: list[int] = [0]
    route: list[int] = []
    for node in [*sequence.tolist(), 0]:
        if node != 0:
            route.append(node)
            continue
        if route:
            for part in split_route(route, linehaul_demand, backhaul_demand):
                nodes += [*part, 0]
        route = []
    return np.asarray(nodes, dtype=np.int64)


def split_route(
    route: list[int], linehaul_demand: np.ndarray, backhaul_demand: np.ndarray
) -> list[list[int]]:
    """One route (no depot), or the route cut before its first backhaul whose pickup would
    exceed the route's deliveries, and the backhauls from there on."""
    delivered = float(linehaul_demand[route].sum())
    if delivered == 0.0:
        return [route]  # backhaul-only: pickups <= Q is the whole rule
    picked = 0.0
    for position, node in enumerate(route):
        picked += float(backhaul_demand[node])
        if picked > delivered:
            return [route[:position], route[position:]]
    return [route]
