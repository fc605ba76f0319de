"""What PyVRP solves for MVMoE's signed load rule: strict linehaul-first or mixed backhauls.

    python -m optiforge.benchmarks run mvmoe_signed_reference [--instances 50] [--size 50]
        [--iterations 100]

PyVRP cannot express the signed rule (`problems/vrp/pyvrp_solver.py`), so the reference of a
signed-load instance solves a model PyVRP has: strict linehaul-first backhauls or PyVRP's mixed
backhauls. Both solve the same seeded mvmoe VRPB instances (seed 0, a fixed iteration budget);
each solution is judged by the validator under the signed rule. Reports per option the share of
solutions valid under the signed rule and the mean cost (over all instances, and over those
valid under both). `pyvrp_solver.SIGNED_AS` is the option with the higher valid share.
`solve_arrays` now repairs a strict solution that breaks the signed rule (`signed_repair`), so a
rerun reports strict as 100 % valid; the stored table was measured before the repair existed.
Writes mvmoe_signed_reference.{json,md}.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.pyvrp_solver import solve_arrays
from optiforge.problems.vrp.validator import validate_batch

SCALE = 100_000
OPTIONS = ("strict", "mixed")


@dataclass(frozen=True)
class Config:
    instances: int = 50
    size: int = 50
    iterations: int = 100


def main(run: Run, args: Config) -> None:
    batch = generate("VRPB", args.size, args.instances, seed=2026, convention="mvmoe")
    jobs = [instance_arrays(batch, row) for row in range(args.instances)]
    costs, valid = {}, {}
    for option in OPTIONS:
        solutions = [solve_arrays(a, args.iterations, SCALE, 0, signed_as=option) for a in jobs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # counted below instead
            sequences = [s.sequence for s in solutions]
            # routes judged one by one (any order): what each PyVRP model puts into a route
            checked = validate_batch(batch, sequences, on_infeasible="warn", route_order="any")
        costs[option] = np.array([s.cost for s in solutions])
        valid[option] = np.isfinite(checked)
    both = valid["strict"] & valid["mixed"]
    rows = [
        {
            "option": option,
            "valid_share": float(valid[option].mean()),
            "mean_cost_all": float(costs[option].mean()),
            "mean_cost_valid_in_both": float(costs[option][both].mean()) if both.any() else None,
        }
        for option in OPTIONS
    ]
    title = (
        f"PyVRP ({args.iterations} iterations, seed 0) on {args.instances} mvmoe VRPB{args.size} "
        "instances (seed 2026), judged under the signed load rule"
    )
    columns = [
        Column("PyVRP model", "option"),
        Column("valid under the signed rule", "valid_share", ".0%"),
        Column("mean cost (all)", "mean_cost_all", ".4f"),
        Column(
            f"mean cost (valid in both, {int(both.sum())} instances)",
            "mean_cost_valid_in_both",
            ".4f",
        ),
    ]
    payload = {"config": asdict(args), "rows": rows}
    run.write(
        "mvmoe_signed_reference", payload, f"{title}\n\n{markdown_table(rows, columns)}", indent=2
    )


BENCHMARK = Benchmark(
    "mvmoe_signed_reference",
    main,
    Config,
    smoke=dict(instances=2, size=10, iterations=5),
    peers=("pyvrp",),
)

if __name__ == "__main__":
    BENCHMARK.main()
