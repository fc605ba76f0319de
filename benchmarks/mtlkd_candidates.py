"""The MTL-KD student's greedy decoding at large n, with and without the k-nearest candidate
restriction: time per instance and gap to PyVRP.

    python -m optiforge.benchmarks run mtlkd_candidates [--sizes 200 500 1000] [--instances 16 16 8]
        [--ks 0 20 50 100] [--iterations 1000] [--threads 1]
        [--student weights/mtlkd/student_n50.pt] [--convention routefinder]

CVRP instances from our generator (seed = n, `--convention`), decoded greedily from the depot
by `--student` (a student weights file), once per k (0 = unrestricted, the heavy decoder over
every remaining node), all instances of a size as one batch (one warm-up decoding at n = 20
first). Time = wall seconds of that batch / instances (one decoding, `--threads` threads).
Reference: PyVRP with a fixed budget of `--iterations` iterations per instance (seed 0,
`optiforge.problems.vrp.pyvrp_solver`); gap = mean over instances of 100 (cost - reference) /
reference. Every solution passes the validator (`validate_batch` raises otherwise). Writes
benchmarks/results/<--output, default mtlkd_candidates>.{json,md}.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.lightning_modules.mtlkd.policy_weights import load_policy, resolve_weights
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.pyvrp_solver import PyVRPSolver
from optiforge.problems.vrp.validator import validate_batch

ROOT = Path(__file__).resolve().parents[1]


def greedy_costs(policy: HeavyDecoderPolicy, batch: VRPBatch) -> tuple[np.ndarray, float]:
    """Validated greedy costs [B] of `policy` and the wall seconds per instance."""
    start = time.perf_counter()
    with torch.no_grad():
        rollout = policy(batch, 1, "greedy")
    seconds = (time.perf_counter() - start) / batch.batch_size
    return validate_batch(batch, env.solution(rollout.state)), seconds


def measure(args: Config) -> list[dict[str, float]]:
    """One row per (n, k): time per instance, mean cost and mean gap to PyVRP."""
    policy = load_policy(resolve_weights(args.student))
    assert isinstance(policy, HeavyDecoderPolicy)
    policy.candidate_min_nodes = 0
    greedy_costs(policy, generate("CVRP", 20, 1, seed=0))  # warm-up
    rows = []
    for n, count in zip(args.sizes, args.instances, strict=True):
        batch = generate("CVRP", n, count, seed=n, convention=args.convention)
        solver = PyVRPSolver(iterations=args.iterations)
        reference = np.array([solution.cost for solution in solver.solve(batch)])
        for k in args.ks:
            policy.candidate_k = k or None
            costs, seconds = greedy_costs(policy, batch)
            gap = 100.0 * (costs - reference) / reference
            row = {
                "n": n,
                "instances": count,
                "k": k,
                "s_per_instance": seconds,
                "mean_cost": float(costs.mean()),
                "reference_cost": float(reference.mean()),
                "gap": float(gap.mean()),
            }
            rows.append(row)
            print(row, flush=True)
    return rows


def table(rows: list[dict[str, float]], args: Config) -> str:
    """Markdown table of the rows, with the speed-up over k = 0 (unrestricted) of each n."""
    base = {row["n"]: row["s_per_instance"] for row in rows if row["k"] == 0}
    lines = [
        f"MTL-KD student ({args.student}) greedy on CVRP ({args.convention} convention), "
        f"{args.threads} thread(s); reference PyVRP {args.iterations} iterations; "
        "k = 0: unrestricted",
        "",
        "| n | instances | k | s / instance | speed-up | mean cost | PyVRP cost | gap % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        speed = base[row["n"]] / row["s_per_instance"] if row["n"] in base else float("nan")
        lines.append(
            f"| {row['n']} | {row['instances']} | {row['k'] or 'off'} "
            f"| {row['s_per_instance']:.2f} | {speed:.1f}x | {row['mean_cost']:.3f} "
            f"| {row['reference_cost']:.3f} | {row['gap']:.2f} |"
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    """One instance count per size; `ks`: candidate-list sizes (0 = unrestricted); `output`:
    the result file stem."""

    sizes: tuple[int, ...] = (200, 500, 1000)
    instances: tuple[int, ...] = (16, 16, 8)
    ks: tuple[int, ...] = (0, 20, 50, 100)
    iterations: int = 1000
    threads: int = 1
    student: str = "weights/mtlkd/student_n50.pt"
    convention: Literal["routefinder", "mvmoe"] = "routefinder"
    output: str = "mtlkd_candidates"

    def __post_init__(self) -> None:
        if len(self.instances) != len(self.sizes):
            raise ValueError("instances needs one value per sizes value")
        if any(k < 0 for k in self.ks):
            raise ValueError(f"ks must be >= 0 (0 = unrestricted), got {self.ks}")


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    rows = measure(args)
    payload = {"config": {**asdict(args), "variant": "CVRP"}, "rows": rows}
    run.write(args.output, payload, table(rows, args), indent=2)


BENCHMARK = Benchmark(
    "mtlkd_candidates",
    main,
    Config,
    smoke=dict(sizes=(20,), instances=(1,), ks=(0, 5), iterations=5),
    nonnegative=("ks",),
    peers=("pyvrp",),
)

if __name__ == "__main__":
    BENCHMARK.main()
