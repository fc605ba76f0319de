"""PyVRP reference quality: the old wall-clock budgets against iteration budgets, n = 50.

    python -m optiforge.benchmarks run pyvrp_iteration_budget [--instances 16]
        [--variants CVRP VRPTW]
        [--time-limits 0.05 0.1 1.0] [--iterations 50 100 250 500 1000 2000]

The seeded n = 50 instances of each variant are solved by PyVRP (seed 0) once per wall-clock
limit (`MaxRuntime`, the old stopping rule; the iterations it reached are recorded) and once per
iteration budget (`MaxIterations`, the new one). The defaults were read off its table: the
smallest budget whose mean cost is at most the old limit's on both variants (1 s -> 1000 for
`PyVRPSolver`, 0.1 s -> 250 for `VRPDataModule`, 0.05 s -> 100). Iterations per second depend
on the machine and its load; the iteration budgets' costs do not.
Writes pyvrp_iteration_budget.{json,md}.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import pyvrp
from pyvrp.stop import MaxIterations, MaxRuntime, StoppingCriterion

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.pyvrp_solver import problem_data

SCALE = 100_000


def solve(
    arrays: dict[str, np.ndarray], stop: Callable[[], StoppingCriterion]
) -> tuple[float, int, float]:
    """(cost in model units, iterations, seconds) of one PyVRP search; `stop` makes a fresh
    criterion (criteria are stateful: they count iterations and time from their first call)."""
    result = pyvrp.solve(problem_data(arrays, SCALE), stop(), seed=0, display=False)
    return result.cost() / SCALE, result.num_iterations, result.runtime


@dataclass(frozen=True)
class Config:
    instances: int = 16
    variants: tuple[str, ...] = ("CVRP", "VRPTW")
    time_limits: tuple[float, ...] = (0.05, 0.1, 1.0)
    iterations: tuple[int, ...] = (50, 100, 250, 500, 1000, 2000)


COLUMNS = [
    Column("variant", "variant"),
    Column("stop", "stop"),
    Column("budget", "budget", "g"),
    Column("mean cost", "mean_cost", ".4f"),
    Column("mean iterations", "mean_iterations", ".0f"),
    Column("mean seconds", "mean_seconds", ".3f"),
]


def main(run: Run, args: Config) -> None:
    rows = []
    for name in args.variants:
        batch = generate(name, 50, args.instances, seed=2026)
        jobs = [instance_arrays(batch, row) for row in range(args.instances)]
        stops: list[tuple[str, float, Callable[[], StoppingCriterion]]]
        stops = [("seconds", t, lambda t=t: MaxRuntime(t)) for t in args.time_limits]
        stops += [("iterations", k, lambda k=k: MaxIterations(k)) for k in args.iterations]
        for kind, budget, stop in stops:
            runs = np.array([solve(arrays, stop) for arrays in jobs])
            rows.append(
                {
                    "variant": name,
                    "stop": kind,
                    "budget": budget,
                    "mean_cost": float(runs[:, 0].mean()),
                    "mean_iterations": float(runs[:, 1].mean()),
                    "mean_seconds": float(runs[:, 2].mean()),
                }
            )
            run.log(str(rows[-1]))
    title = f"PyVRP on {args.instances} seeded n = 50 instances per variant, seed 0"
    payload = {"config": asdict(args), "rows": rows}
    run.write("pyvrp_iteration_budget", payload, f"{title}\n\n{markdown_table(rows, COLUMNS)}")


BENCHMARK = Benchmark(
    "pyvrp_iteration_budget",
    main,
    Config,
    smoke=dict(instances=1, variants=("CVRP",), time_limits=(0.01,), iterations=(5,)),
    peers=("pyvrp",),
)

if __name__ == "__main__":
    BENCHMARK.main()
