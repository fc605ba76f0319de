"""PyVRP reference quality: the old wall-clock budgets against iteration budgets, n = 50.

    python -m benchmarks.pyvrp_iteration_budget [--instances 16] [--variants CVRP VRPTW]
        [--time-limits 0.05 0.1 1.0] [--iterations 50 100 250 500 1000 2000]

The seeded n = 50 instances of each variant are solved by PyVRP (seed 0) once per wall-clock
limit (`MaxRuntime`, the old stopping rule; the iterations it reached are recorded) and once per
iteration budget (`MaxIterations`, the new one). The defaults were read off its table: the
smallest budget whose mean cost is at most the old limit's on both variants (1 s -> 1000 for
`PyVRPSolver`, 0.1 s -> 250 for `VRPDataModule`, 0.05 s -> 100). Iterations per second depend
on the machine and its load; the iteration budgets' costs do not.
Writes benchmarks/results/pyvrp_iteration_budget.{json,md}.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pyvrp.stop import MaxIterations, MaxRuntime, StoppingCriterion

from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.pyvrp_solver import build_model

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SCALE = 100_000


def run(
    arrays: dict[str, np.ndarray], stop: Callable[[], StoppingCriterion]
) -> tuple[float, int, float]:
    """(cost in model units, iterations, seconds) of one PyVRP search; `stop` makes a fresh
    criterion (criteria are stateful: they count iterations and time from their first call)."""
    result = build_model(arrays, SCALE).solve(stop(), seed=0, display=False)
    return result.cost() / SCALE, result.num_iterations, result.runtime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--variants", nargs="+", default=["CVRP", "VRPTW"])
    parser.add_argument("--time-limits", nargs="+", type=float, default=[0.05, 0.1, 1.0])
    parser.add_argument(
        "--iterations", nargs="+", type=int, default=[50, 100, 250, 500, 1000, 2000]
    )
    args = parser.parse_args()
    rows = []
    for name in args.variants:
        batch = generate(name, 50, args.instances, seed=2026)
        jobs = [instance_arrays(batch, row) for row in range(args.instances)]
        stops: list[tuple[str, float, Callable[[], StoppingCriterion]]]
        stops = [("seconds", t, lambda t=t: MaxRuntime(t)) for t in args.time_limits]
        stops += [("iterations", k, lambda k=k: MaxIterations(k)) for k in args.iterations]
        for kind, budget, stop in stops:
            runs = np.array([run(arrays, stop) for arrays in jobs])
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
            print(rows[-1], flush=True)
    lines = [
        f"PyVRP on {args.instances} seeded n = 50 instances per variant, seed 0",
        "",
        "| variant | stop | budget | mean cost | mean iterations | mean seconds |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['variant']} | {r['stop']} | {r['budget']:g} | {r['mean_cost']:.4f} "
        f"| {r['mean_iterations']:.0f} | {r['mean_seconds']:.3f} |"
        for r in rows
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pyvrp_iteration_budget.json").write_text(
        json.dumps({"config": vars(args), "rows": rows}, indent=2)
    )
    (RESULTS / "pyvrp_iteration_budget.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
