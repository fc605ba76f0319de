"""Ruin-and-recreate search under MVMoE's signed load rule, for backhaul references.

PyVRP cannot express the signed rule (`pyvrp_solver.py`) and solves signed instances
linehaul-first, which caps a route's deliveries at Q. The signed rule does not: on a route with
a linehaul the remaining capacity Q - D_k + P_k grows with every pickup, so a route that picks
up p may deliver p more (0 <= D_k - P_k <= Q, `instance.py`), and fewer, longer routes serve the
same customers. On MVMoE's OVRPB50 file the linehaul-first references were 23 % above the
published solutions that pass MVMoE's rule (docs/mtlkd.md). This search starts from a valid
solution (PyVRP's, repaired) and improves it under the rule itself:

- ruin: remove a random customer and its k - 1 nearest customers (k uniform in `removed`); a
  route that breaks the rule without them (a delivery gone before a pickup) is removed whole;
- recreate: reinsert them one at a time in random order, each at the cheapest position whose
  route stays feasible (signed load, distance limit, time windows: the validator's rules,
  without its slack), or on a route of its own;
- accept the result if it costs less than the current solution times (1 + t), t falling
  linearly from `threshold` to 0 over the iterations; keep the best.

Deterministic for a seed and an iteration budget (no wall-clock stop). The result is returned
in MVMoE's driving order (`route_order`) and, like every reference, checked by the validator by
its caller (`pyvrp_solver.PyVRPSolver`).
"""

from __future__ import annotations

import numpy as np

Route = list[int]


class _Problem:
    """One signed-load instance as Python lists (fast scalar access in the inner loops)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        locs = np.asarray(arrays["locs"], dtype=np.float64)
        dist = np.linalg.norm(locs[:, None] - locs[None], axis=-1)
        self.open = bool(arrays["open_route"])
        self.dist: list[list[float]] = dist.tolist()
        self.back_leg = [0.0 if self.open else d for d in dist[:, 0].tolist()]
        self.linehaul = np.asarray(arrays["linehaul_demand"], dtype=np.float64).tolist()
        self.backhaul = np.asarray(arrays["backhaul_demand"], dtype=np.float64).tolist()
        self.capacity = float(arrays["capacity"])
        windows = np.asarray(arrays["time_windows"], dtype=np.float64)
        self.early, self.late = windows[:, 0].tolist(), windows[:, 1].tolist()
        self.service = np.asarray(arrays["service_time"], dtype=np.float64).tolist()
        self.limit = float(arrays["distance_limit"])
        self.neighbours = np.argsort(dist[1:, 1:], axis=1) + 1  # [n, n] nearest customers first

    def feasible(self, route: Route) -> bool:
        """The validator's rules for one route (signed load, length, windows), no slack."""
        cap = self.capacity
        has_linehaul = any(self.linehaul[i] > 0 for i in route)
        delivered = picked = 0.0
        pos, time, length = 0, self.early[0], 0.0
        for node in route:
            step = self.dist[pos][node]
            length += step
            time += step
            if time > self.late[node]:
                return False
            time = max(time, self.early[node]) + self.service[node]
            delivered += self.linehaul[node]
            picked += self.backhaul[node]
            if has_linehaul and not 0.0 <= delivered - picked <= cap:
                return False
            if not has_linehaul and picked > cap:
                return False
            pos = node
        length += self.back_leg[pos]
        if not self.open and time + self.dist[pos][0] > self.late[0]:
            return False
        return length <= self.limit

    def length(self, route: Route) -> float:
        if not route:
            return 0.0
        total = self.dist[0][route[0]] + self.back_leg[route[-1]]
        return total + sum(self.dist[a][b] for a, b in zip(route[:-1], route[1:], strict=True))

    def arc_out(self, node: int, nxt: int) -> float:
        """Cost of the arc node -> nxt, nxt = 0 meaning the route's end."""
        return self.back_leg[node] if nxt == 0 else self.dist[node][nxt]


def _insert(problem: _Problem, routes: list[Route], node: int) -> None:
    """Put `node` at its cheapest feasible position (a new route if none)."""
    candidates: list[tuple[float, int, int]] = []
    for r, route in enumerate(routes):
        path = [0, *route, 0]
        for i in range(len(route) + 1):
            before, after = path[i], path[i + 1]
            delta = (
                problem.dist[before][node]
                + problem.arc_out(node, after)
                - problem.arc_out(before, after)
            )
            candidates.append((delta, r, i))
    candidates.sort()
    alone = problem.dist[0][node] + problem.back_leg[node]
    for delta, r, i in candidates:
        if delta >= alone:
            break
        trial = [*routes[r][:i], node, *routes[r][i:]]
        if problem.feasible(trial):
            routes[r] = trial
            return
    routes.append([node])


def _cost(problem: _Problem, routes: list[Route]) -> float:
    return sum(problem.length(route) for route in routes)


def improve_signed(
    arrays: dict[str, np.ndarray],
    routes: list[Route],
    iterations: int,
    seed: int = 0,
    removed: tuple[int, int] = (3, 10),
    threshold: float = 0.01,
) -> list[Route]:
    """Routes of a solution at least as short as `routes` (feasible under the signed rule, as
    the validator judges one route at a time) after `iterations` ruin-and-recreate rounds. A
    start that breaks a rule is returned unchanged: the caller's validator reports it."""
    problem = _Problem(arrays)
    if not all(problem.feasible(route) for route in routes):
        return [list(route) for route in routes]
    n = len(problem.linehaul) - 1
    rng = np.random.default_rng(seed)
    current = [list(route) for route in routes if route]
    current_cost = best_cost = _cost(problem, current)
    best = [list(route) for route in current]
    low, high = min(removed[0], n), min(removed[1], n)
    for step in range(iterations):
        seed_node = int(rng.integers(1, n + 1))
        k = int(rng.integers(low, high + 1))
        out = {seed_node, *problem.neighbours[seed_node - 1, : k - 1].tolist()}
        trial = []
        for route in current:
            kept = [v for v in route if v not in out]
            if kept and not problem.feasible(kept):  # removing a delivery can break the rule
                out.update(kept)
            elif kept:
                trial.append(kept)
        for node in rng.permutation(sorted(out)).tolist():
            _insert(problem, trial, int(node))
        trial_cost = _cost(problem, trial)
        allowance = threshold * (1.0 - step / iterations)
        if trial_cost < current_cost * (1.0 + allowance) - 1e-12:
            current, current_cost = trial, trial_cost
            if current_cost < best_cost - 1e-12:
                best, best_cost = [list(route) for route in current], current_cost
    return best


def routes_to_sequence(routes: list[Route]) -> np.ndarray:
    """[0, r0..., 0, r1..., 0]: routes with a linehaul first is the caller's business."""
    nodes = [0]
    for route in routes:
        nodes += [*route, 0]
    return np.asarray(nodes, dtype=np.int64)
