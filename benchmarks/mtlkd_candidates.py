"""The MTL-KD student's greedy decoding at large n, with and without the k-nearest candidate
restriction: time per instance and gap to PyVRP.

    python -m benchmarks.mtlkd_candidates [--sizes 200 500 1000] [--instances 16 16 8]
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

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from optiforge.lightning_modules.mtlkd.policy_weights import load_policy, resolve_weights
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.pyvrp_solver import PyVRPSolver
from optiforge.problems.vrp.validator import validate_batch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def greedy_costs(policy: HeavyDecoderPolicy, batch: VRPBatch) -> tuple[np.ndarray, float]:
    """Validated greedy costs [B] of `policy` and the wall seconds per instance."""
    start = time.perf_counter()
    with torch.no_grad():
        rollout = policy(batch, 1, "greedy")
    seconds = (time.perf_counter() - start) / batch.batch_size
    return validate_batch(batch, env.solution(rollout.state)), seconds


def measure(args: argparse.Namespace) -> list[dict[str, float]]:
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


def table(rows: list[dict[str, float]], args: argparse.Namespace) -> str:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000])
    parser.add_argument("--instances", type=int, nargs="+", default=[16, 16, 8])
    parser.add_argument("--ks", type=int, nargs="+", default=[0, 20, 50, 100])
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--student", default="weights/mtlkd/student_n50.pt")
    parser.add_argument("--convention", choices=["routefinder", "mvmoe"], default="routefinder")
    parser.add_argument("--output", default="mtlkd_candidates", help="results file stem")
    args = parser.parse_args()
    if len(args.instances) != len(args.sizes):
        parser.error("--instances needs one value per --sizes value")
    if any(k < 0 for k in args.ks):
        parser.error(f"--ks must be >= 0 (0 = unrestricted), got {args.ks}")
    torch.set_num_threads(args.threads)
    rows = measure(args)
    RESULTS.mkdir(exist_ok=True)
    payload = {"config": {**vars(args), "variant": "CVRP"}, "rows": rows}
    (RESULTS / f"{args.output}.json").write_text(json.dumps(payload, indent=2))
    text = table(rows, args)
    (RESULTS / f"{args.output}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
