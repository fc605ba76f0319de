"""Reference solutions for all 16 variants from PyPI `pyvrp` (0.14, iterated local search).

How each attribute maps onto PyVRP:

* C: `delivery` on linehaul clients, vehicle `capacity`; one vehicle per customer (never binding).
* B: backhaul customers get `pickup`, so PyVRP checks the load at every point of a route (mixed
  backhaul). Strict backhaul (linehauls first) additionally puts `MAX_VALUE` on every
  backhaul -> linehaul arc; the result is rejected if such an arc is used anyway.
* Signed load (MVMoE's rule, `instance.py`): PyVRP cannot express it. Its load model is: the
  vehicle leaves with the route's deliveries, load = deliveries still on board + pickups so far
  <= Q, with no lower bound, while the signed rule also needs pickups so far <= deliveries so
  far on a route with linehauls. Signed instances are solved as `SIGNED_AS` instead: strict
  linehaul-first backhauls (valid under the signed rule on 50 of 50 mvmoe VRPB50 instances at
  100 iterations, against 25 of 50 for PyVRP's mixed backhauls:
  `benchmarks/mvmoe_signed_reference.py`; but not always: on 800 instances of the 8 backhaul
  variants at 500 iterations, 371 broke it), then repaired (`signed_repair`): a route whose
  pickups overtake its deliveries keeps its backhauls up to that point and the rest becomes a
  backhaul-only route. The repair is valid by construction and never breaks a time window or
  the distance limit. Linehaul-first routes cannot use what the signed rule allows (a route
  that picked up p may deliver p more), so the repaired solution is then improved under the
  rule itself by `signed_rounds` ruin-and-recreate rounds (`signed_search`; default 4 x
  `iterations`), and its backhaul-only routes are moved behind the others (`route_order`), the
  order MVMoE's env drives them in. The reference is an upper bound on the signed optimum.
  Every solution is still checked under the signed rule; an invalid one would be reported (a
  warning) with cost NaN, excluded from gaps.
* O: arcs into the depot have distance and duration 0, and the depot has no closing time.
* L: `max_distance` on the vehicle type.
* TW: client `tw_early`/`tw_late`/`service_duration`; the depot's window is the shift.

Integer scaling. PyVRP works in integers, so lengths and times are multiplied by `scale`
(default 100000) and rounded *conservatively*: arc lengths, service times and earliest starts
up, latest starts and the distance limit down; demands by `DEMAND_SCALE` up and the capacity
down (a 1e-6 scaled-unit slack absorbs float noise such as 0.18 stored as 0.1800000072). Any
solution that is feasible in integers is therefore feasible in float units, and its float cost,
recomputed from the coordinates, is within (number of arcs) / `scale` of PyVRP's objective
divided by `scale`; against the float optimum it is within 2 x (number of arcs) / `scale`.

Reproducible: the search stops after a fixed number of PyVRP iterations (`MaxIterations`), never
on wall-clock time, so the same seed and budget give the same solutions on any machine and under
any load. The wall time is only reported (`PyVRPSolution.seconds`). The default budget,
`DEFAULT_ITERATIONS`, matches the quality of the former 1 s limit at n = 50
(`benchmarks/pyvrp_iteration_budget.py`).

Every returned solution is checked by `optiforge.problems.vrp.validator.validate` before it is
reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch
from pyvrp import Model, ProblemData, Result
from pyvrp import solve as pyvrp_solve
from pyvrp.constants import MAX_VALUE
from pyvrp.stop import MaxIterations

from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.route_order import mvmoe_route_order
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.signed_repair import repair_signed_routes
from optiforge.problems.vrp.signed_search import improve_signed, routes_to_sequence
from optiforge.problems.vrp.validator import validate, validate_batch

DEMAND_SCALE = 1_000_000
SLACK = 1e-6
DEFAULT_ITERATIONS = 1000
BackhaulModel = Literal["strict", "mixed"]
SIGNED_AS: BackhaulModel = "strict"
SIGNED_ROUNDS_PER_ITERATION = 4


@dataclass(frozen=True)
class PyVRPSolution:
    """A solved instance: node sequence with 0 between routes, e.g. [0, 3, 5, 0, 2, 1, 0], its
    cost in the batch's float units (open routes do not pay the return leg), the iterations
    searched and the wall time they took (reported only; it decides nothing)."""

    sequence: np.ndarray
    cost: float
    iterations: int
    seconds: float


def _up(value: np.ndarray | float, scale: float) -> np.ndarray:
    return np.ceil(np.asarray(value, dtype=np.float64) * scale - SLACK).astype(np.int64)


def _down(value: np.ndarray | float, scale: float) -> np.ndarray:
    return np.floor(np.asarray(value, dtype=np.float64) * scale + SLACK).astype(np.int64)


def is_strict(arrays: dict[str, np.ndarray], signed_as: BackhaulModel = SIGNED_AS) -> bool:
    """Whether PyVRP solves the instance with linehaul-first backhauls: its own rule, or
    `signed_as` for a signed-load instance, which PyVRP cannot express."""
    if arrays["signed_load"]:
        return signed_as == "strict"
    return not arrays["mixed_backhaul"]


def problem_data(
    arrays: dict[str, np.ndarray], scale: int, signed_as: BackhaulModel = SIGNED_AS
) -> ProblemData:
    """The PyVRP problem of one instance (see the module docstring for the mapping). The arc
    lengths go in as one matrix: a `Model` edge per arc costs seconds at n = 1000."""
    locs, windows = arrays["locs"], arrays["time_windows"]
    num_nodes = len(locs)
    is_open, strict = bool(arrays["open_route"]), is_strict(arrays, signed_as)
    model = Model()
    points = [model.add_location(float(x), float(y)) for x, y in locs * scale]
    depot_late = MAX_VALUE if is_open or math.isinf(windows[0, 1]) else _down(windows[0, 1], scale)
    model.add_depot(points[0], tw_early=int(_up(windows[0, 0], scale)), tw_late=int(depot_late))
    limit = float(arrays["distance_limit"])
    model.add_vehicle_type(
        num_available=num_nodes - 1,
        capacity=[int(_down(arrays["capacity"], DEMAND_SCALE))],
        max_distance=MAX_VALUE if math.isinf(limit) else int(_down(limit, scale)),
    )
    delivery = _up(arrays["linehaul_demand"], DEMAND_SCALE)
    pickup = _up(arrays["backhaul_demand"], DEMAND_SCALE)
    for node in range(1, num_nodes):
        late = windows[node, 1]
        model.add_client(
            points[node],
            delivery=[int(delivery[node])],
            pickup=[int(pickup[node])],
            service_duration=int(_up(arrays["service_time"][node], scale)),
            tw_early=int(_up(windows[node, 0], scale)),
            tw_late=MAX_VALUE if math.isinf(late) else int(_down(late, scale)),
        )
    lengths = _up(np.linalg.norm(locs[:, None] - locs[None], axis=-1), scale)
    if is_open:
        lengths[:, 0] = 0
    if strict:
        is_backhaul = arrays["backhaul_demand"] > 0
        lengths[np.ix_(is_backhaul, ~is_backhaul & (np.arange(num_nodes) > 0))] = MAX_VALUE
    np.fill_diagonal(lengths, 0)
    return model.data().replace(distance_matrices=[lengths], duration_matrices=[lengths.copy()])


def route_length(locs: np.ndarray, sequence: np.ndarray, open_route: bool) -> float:
    """Float length of a 0-separated node sequence; open routes skip each return leg."""
    total = 0.0
    for frm, to in zip(sequence[:-1], sequence[1:], strict=True):
        if not (open_route and to == 0):
            total += float(np.linalg.norm(locs[frm] - locs[to]))
    return total


def result_sequence(result: Result) -> np.ndarray:
    """The best solution of a PyVRP result as a 0-separated node sequence [0, ..., 0]."""
    nodes = [0]
    for route in result.best.routes():
        nodes += [activity.idx + 1 for activity in route if activity.is_client()] + [0]
    return np.asarray(nodes, dtype=np.int64)


def solve_arrays(
    arrays: dict[str, np.ndarray],
    iterations: int,
    scale: int,
    seed: int,
    signed_as: BackhaulModel = SIGNED_AS,
    signed_rounds: int = 0,
) -> PyVRPSolution:
    """Solve one instance given as `instance_arrays` with `iterations` PyVRP iterations (and,
    on a signed instance, `signed_rounds` rounds of `signed_search`); raise if PyVRP finds
    nothing feasible. Its cost is not yet validated (`PyVRPSolver.solve` does)."""
    stop = MaxIterations(iterations)
    result = pyvrp_solve(problem_data(arrays, scale, signed_as), stop, seed=seed, display=False)
    if not result.is_feasible():
        raise RuntimeError(f"PyVRP found no feasible solution within iterations={iterations}")
    sequence = result_sequence(result)
    if is_strict(arrays, signed_as):
        is_backhaul = arrays["backhaul_demand"][sequence] > 0
        after = sequence[1:] != 0
        if (is_backhaul[:-1] & ~is_backhaul[1:] & after).any():
            raise RuntimeError("PyVRP used a forbidden backhaul -> linehaul arc")
        if arrays["signed_load"]:
            sequence = repair_signed_routes(
                sequence, arrays["linehaul_demand"], arrays["backhaul_demand"]
            )
            routes = improve_signed(arrays, split_routes(sequence), signed_rounds, seed)
            sequence = mvmoe_route_order(
                torch.from_numpy(routes_to_sequence(routes))[None],
                torch.from_numpy(arrays["linehaul_demand"])[None],
                torch.ones(1, dtype=torch.bool),
            )[0].numpy()
    cost = route_length(arrays["locs"], sequence, bool(arrays["open_route"]))
    return PyVRPSolution(sequence, cost, result.num_iterations, result.runtime)


class PyVRPSolver:
    """PyVRP on every instance of a `VRPBatch`, one process per worker.

    Args:
        iterations: PyVRP iterations per instance (>= 1), the only stopping rule: same seed and
            budget, same solutions (`DEFAULT_ITERATIONS` ~ the former 1 s at n = 50).
        num_workers: parallel processes (>= 1); 1 solves in this process.
        scale: integer scaling of lengths and times (>= 1), see the module docstring.
        seed: PyVRP's random seed (the same for every instance), also the signed search's.
        signed_rounds: ruin-and-recreate rounds on signed-load instances (MVMoE's backhauls,
            `signed_search`) after PyVRP; None = 4 x `iterations`; other instances ignore it.
    """

    def __init__(
        self,
        iterations: int = DEFAULT_ITERATIONS,
        num_workers: int = 1,
        scale: int = 100_000,
        seed: int = 0,
        signed_rounds: int | None = None,
    ) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        if scale < 1:
            raise ValueError(f"scale must be >= 1, got {scale}")
        if signed_rounds is not None and (
            isinstance(signed_rounds, bool)
            or not isinstance(signed_rounds, int)
            or signed_rounds < 0
        ):
            raise ValueError(
                f"signed_rounds must be None or an integer >= 0, got {signed_rounds!r}"
            )
        self.iterations = iterations
        self.signed_rounds = SIGNED_ROUNDS_PER_ITERATION * iterations
        if signed_rounds is not None:
            self.signed_rounds = signed_rounds
        self.num_workers = num_workers
        self.scale = scale
        self.seed = seed

    def solve(
        self, batch: VRPBatch, progress: Callable[[int, int], None] | None = None
    ) -> list[PyVRPSolution]:
        """One validated solution per instance of `batch`, in batch order; a signed-load
        instance's solution that breaks the signed rule is warned about and costs NaN.
        `progress(done, B)` is called as each solution comes back, in batch order."""
        batch.check("batch")
        batch = batch.to("cpu")
        jobs = [instance_arrays(batch, row) for row in range(batch.batch_size)]
        args = (
            [self.iterations] * len(jobs),
            [self.scale] * len(jobs),
            [self.seed] * len(jobs),
            [SIGNED_AS] * len(jobs),
            [self.signed_rounds] * len(jobs),
        )
        solutions: list[PyVRPSolution] = []
        with ExitStack() as stack:
            if self.num_workers == 1:
                results = map(solve_arrays, jobs, *args)
            else:
                pool = stack.enter_context(ProcessPoolExecutor(self.num_workers))
                results = pool.map(solve_arrays, jobs, *args)
            for solution in results:
                solutions.append(solution)
                if progress is not None:
                    progress(len(solutions), len(jobs))
        sequences = [solution.sequence for solution in solutions]
        costs = validate_batch(batch, sequences, on_infeasible="warn", solver="PyVRP")
        for row in np.flatnonzero(np.isnan(costs) & ~batch.signed_load.numpy()):
            validate(batch.index(int(row)), sequences[row], f"instance {row}")  # PyVRP's bug
        return [
            replace(solution, cost=math.nan) if np.isnan(cost) else solution
            for solution, cost in zip(solutions, costs, strict=True)
        ]
