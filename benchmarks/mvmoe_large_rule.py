"""Which capacity rule for n > 200 reproduces MTL-KD's reported HGS objectives at n = 500 / 1000.

    python -m optiforge.benchmarks run mvmoe_large_rule [--instances-500 50] [--instances-1000 10]
        [--iterations 100]

MVMoE defines its capacity only at n = 20 / 50 / 100 / 200 (30 / 40 / 50 / 70) and raises
otherwise; MTL-KD's paper reports HGS objectives CVRP500 62.07, CVRP1000 119.54 and VRPTW1000
166.47. Candidate capacities at (500, 1000):

- `largest_defined_below`: 70 / 70, MVMoE's capacity of its largest size (n = 200);
- `training_size`: 50 / 50, MVMoE's capacity at n = 100, the size MTL-KD trains on;
- `routefinder`: 30 + n // 5 = 130 / 230 (RouteFinder; MTPOMO's table has the same values);
- `lehd_bq`: 100 / 250 (LEHD / BQ's CVRP500 / CVRP1000 test sets).

Each candidate solves the same seeded mvmoe instances (the capacity changes nothing else in
the generator) with PyVRP at a fixed iteration budget (seed 0, one process); every solution is
validated. VRPTW1000 is solved twice: with MVMoE's windows and with RouteFinder's (MTPOMO's)
windows, because its objective depends on the windows far more than on the capacity. A small
budget leaves PyVRP above HGS's converged objectives, more so at n = 1000, so a candidate's
mean should land somewhat above the paper's. The chosen rule is the candidate with the
smallest mean relative deviation on CVRP500 and CVRP1000. One core: set OMP_NUM_THREADS=1.
Writes mvmoe_large_rule.{json,md}.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import pyvrp
import torch
from pyvrp.stop import MaxIterations

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.pyvrp_solver import DEMAND_SCALE, problem_data, result_sequence
from optiforge.problems.vrp.validator import validate_batch

SCALE = 100_000
PAPER = {"CVRP500": 62.07, "CVRP1000": 119.54, "VRPTW1000": 166.47}
CANDIDATES: dict[str, dict[int, int]] = {
    "largest_defined_below": {500: 70, 1000: 70},
    "training_size": {500: 50, 1000: 50},
    "routefinder": {500: 130, 1000: 230},
    "lehd_bq": {500: 100, 1000: 250},
}
# (set name, variant, size, convention of the windows)
SETS = (
    ("CVRP500", "CVRP", 500, "mvmoe"),
    ("CVRP1000", "CVRP", 1000, "mvmoe"),
    ("VRPTW1000", "VRPTW", 1000, "mvmoe"),
    ("VRPTW1000 (RouteFinder windows)", "VRPTW", 1000, "routefinder"),
)


def with_capacity(batch: VRPBatch, capacity: int) -> VRPBatch:
    """`batch` with every vehicle's capacity set to `capacity`."""
    return replace(batch, capacity=torch.full_like(batch.capacity, float(capacity)))


def solve_candidates(batch: VRPBatch, capacities: list[int], iterations: int) -> np.ndarray:
    """Validated PyVRP costs [len(capacities), B]: one model per instance, its vehicle type's
    capacity replaced per candidate."""
    costs = np.zeros((len(capacities), batch.batch_size))
    sequences: list[list[np.ndarray]] = [[] for _ in capacities]
    for row in range(batch.batch_size):
        data = problem_data(instance_arrays(batch, row), SCALE)
        (vehicle,) = data.vehicle_types()
        for k, capacity in enumerate(capacities):
            vehicle_k = vehicle.replace(capacity=[capacity * DEMAND_SCALE])
            result = pyvrp.solve(
                data.replace(vehicle_types=[vehicle_k]), MaxIterations(iterations), seed=0
            )
            sequences[k].append(result_sequence(result))
    for k, capacity in enumerate(capacities):
        costs[k] = validate_batch(with_capacity(batch, capacity), sequences[k], solver="PyVRP")
    return costs


@dataclass(frozen=True)
class Config:
    instances_500: int = 50
    instances_1000: int = 10
    iterations: int = 100


COLUMNS = [
    Column("set", "set"),
    Column("candidate", "candidate"),
    Column("capacity", "capacity"),
    Column("instances", "instances"),
    Column("mean cost (std)", lambda r: f"{r['mean_cost']:.2f} ({r['std_cost']:.2f})"),
    Column("paper (HGS)", "paper", ".2f"),
    Column("deviation", "deviation", "+.1%"),
]


def main(run: Run, args: Config) -> None:
    counts = {500: args.instances_500, 1000: args.instances_1000}
    rows = []
    for set_name, name, size, convention in SETS:
        start = time.perf_counter()
        batch = generate(name, size, counts[size], seed=2026, convention=convention)
        capacities = [CANDIDATES[c][size] for c in CANDIDATES]
        costs = solve_candidates(batch, capacities, args.iterations)
        paper = PAPER.get(set_name)
        for candidate, capacity, cost in zip(CANDIDATES, capacities, costs, strict=True):
            mean = float(cost.mean())
            rows.append(
                {
                    "set": set_name,
                    "candidate": candidate,
                    "capacity": capacity,
                    "instances": counts[size],
                    "mean_cost": mean,
                    "std_cost": float(cost.std()),
                    "paper": paper,
                    "deviation": None if paper is None else (mean - paper) / paper,
                }
            )
        run.log(f"{set_name}: {time.perf_counter() - start:.0f} s")
    score = {
        c: float(
            np.mean(
                [
                    abs(r["deviation"])
                    for r in rows
                    if r["candidate"] == c and r["set"] in ("CVRP500", "CVRP1000")
                ]
            )
        )
        for c in CANDIDATES
    }
    chosen = min(score, key=score.get)
    text = (
        f"PyVRP ({args.iterations} iterations, seed 0, one process) on seeded mvmoe instances "
        f"(seed 2026): {counts[500]} at n = 500, {counts[1000]} at n = 1000\n\n"
        f"{markdown_table(rows, COLUMNS)}\n\n"
        "Mean |deviation| on CVRP500 and CVRP1000: "
        + ", ".join(f"{c} {s:.1%}" for c, s in score.items())
        + f"\nChosen: {chosen}."
    )
    payload = {"config": asdict(args), "rows": rows, "score": score, "chosen": chosen}
    run.write("mvmoe_large_rule", payload, text, indent=2)


BENCHMARK = Benchmark(
    "mvmoe_large_rule",
    main,
    Config,
    smoke=dict(instances_500=1, instances_1000=1, iterations=2),
    peers=("pyvrp",),
)

if __name__ == "__main__":
    BENCHMARK.main()
