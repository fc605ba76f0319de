"""Greedy inference time per instance and peak memory of the MTL-KD models at n = 100..1000.

    python -m benchmarks.vrp_inference [--sizes 100 200 500 1000] [--batch-sizes 32 16 4 2]
        [--repeats 3] [--threads 1]

CVRP instances from our generator (capacity 30 + n/5), decoded greedily from the depot (one
rollout per instance) by the shipped CVRP teacher (`weights/mtlkd/teacher_cvrp_n50.pt`), the
shipped MTL-KD student (`weights/mtlkd/student_n50.pt`, heavy decoder) and, in the same run, by
RL4CO 0.7's `AttentionModelPolicy` of the teacher's size (POMO settings, untrained: time and
memory do not depend on the weights) on the same instances; time ratios are to RL4CO. Each
(model, n) runs in a fresh process, so its peak resident memory (ru_maxrss) is its own;
reported are the peak and its increase over the process before decoding (model and instances
loaded). Time = median of
`repeats` decodings after one warm-up. Every solution of ours passes the validator; RL4CO's too.
Writes benchmarks/results/vrp_inference.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from optiforge.lightning_modules.mtlkd.policy_weights import (
    SHIPPED_DIR,
    load_policy,
    shipped_teacher_path,
)
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MODELS = (
    "optiforge POMOTeacher",
    "optiforge MTLKDStudent",
    "RL4CO AttentionModelPolicy (POMO size)",
)
PEER = MODELS[-1]


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ours(
    batch: VRPBatch, model: str
) -> tuple[Callable[[], object], Callable[[object], torch.Tensor]]:
    """Greedy decode of the shipped CVRP teacher or student; returns (decode, to_sequences)."""
    if model == "optiforge MTLKDStudent":
        policy = load_policy(SHIPPED_DIR / "student_n50.pt")
    else:
        policy = load_policy(shipped_teacher_path("CVRP", convention="routefinder"))

    def decode() -> object:
        return policy(batch, 1, "greedy")

    return decode, lambda rollout: env.solution(rollout.state)


def rl4co(batch: VRPBatch) -> tuple[Callable[[], object], Callable[[object], torch.Tensor]]:
    """Greedy decode of RL4CO's POMO-size attention policy on the same instances."""
    from rl4co.envs.routing import CVRPEnv
    from rl4co.models.zoo.am import AttentionModelPolicy
    from tensordict import TensorDict

    from benchmarks.teacher_training_vs_rl4co import RL4CO_POLICY

    peer_env = CVRPEnv(generator_params={"num_loc": batch.num_nodes - 1})
    policy = AttentionModelPolicy(env_name=peer_env.name, **RL4CO_POLICY).eval()
    capacity = batch.capacity[:, None].float()
    data = TensorDict(
        {
            "depot": batch.locs[:, 0].float(),
            "locs": batch.locs[:, 1:].float(),
            "demand": batch.linehaul_demand[:, 1:].float() / capacity,
            "capacity": capacity,
        },
        batch_size=[batch.batch_size],
    )

    def decode() -> object:
        td = peer_env.reset(data.clone())
        return policy(td, peer_env, phase="test", decode_type="greedy", return_actions=True)

    return decode, lambda out: out["actions"]


def measure_one(model: str, n: int, batch_size: int, repeats: int) -> dict[str, float]:
    """Median greedy seconds per instance and memory of `model` at size n (this process)."""
    batch = generate("CVRP", n, batch_size, seed=n)
    decode, sequences = rl4co(batch) if model == PEER else ours(batch, model)
    before = peak_rss_mib()
    seconds = []
    with torch.no_grad():
        result = decode()  # warm-up
        for _ in range(repeats):
            start = time.perf_counter()
            result = decode()
            seconds.append(time.perf_counter() - start)
    costs = validate_batch(batch, sequences(result))  # raises on an infeasible solution
    return {
        "ms_per_instance": 1000 * statistics.median(seconds) / batch_size,
        "peak_rss_mib": peak_rss_mib(),
        "decode_rss_increase_mib": peak_rss_mib() - before,
        "mean_cost": float(costs.mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500, 1000])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 16, 4, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--one", choices=MODELS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if len(args.batch_sizes) != len(args.sizes):
        parser.error("--batch-sizes needs one value per --sizes value")
    torch.set_num_threads(args.threads)
    if args.one is not None:  # the child process of one (model, size)
        row = measure_one(args.one, args.sizes[0], args.batch_sizes[0], args.repeats)
        print(json.dumps(row))
        return
    environment = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    rows = []
    for n, batch_size in zip(args.sizes, args.batch_sizes, strict=True):
        for model in MODELS:
            command = [
                sys.executable, "-m", "benchmarks.vrp_inference", "--one", model,
                "--sizes", str(n), "--batch-sizes", str(batch_size),
                "--repeats", str(args.repeats), "--threads", str(args.threads),
            ]  # fmt: skip
            done = subprocess.run(
                command, cwd=ROOT, env=environment, capture_output=True, text=True, check=True
            )
            row = {"n": n, "batch_size": batch_size, "model": model}
            row.update(json.loads(done.stdout.strip().splitlines()[-1]))
            rows.append(row)
            print(row, flush=True)
    lines = [
        f"CVRP greedy decoding, {args.threads} thread(s), median of {args.repeats}",
        "",
        "| n | batch | model | ms / instance | model / RL4CO time | peak RSS MiB "
        "| decode RSS increase MiB |",
        "|---|---|---|---|---|---|---|",
    ]
    peer_ms = {row["n"]: row["ms_per_instance"] for row in rows if row["model"] == PEER}
    for row in rows:
        ratio = None if row["model"] == PEER else row["ms_per_instance"] / peer_ms[row["n"]]
        lines.append(
            f"| {row['n']} | {row['batch_size']} | {row['model']} | {row['ms_per_instance']:.1f} "
            f"| {'' if ratio is None else f'{ratio:.2f}'} | {row['peak_rss_mib']:.0f} "
            f"| {row['decode_rss_increase_mib']:.0f} |"
        )
    RESULTS.mkdir(exist_ok=True)
    config = {"threads": args.threads, "repeats": args.repeats, "variant": "CVRP"}
    (RESULTS / "vrp_inference.json").write_text(
        json.dumps({"config": config, "rows": rows}, indent=2)
    )
    (RESULTS / "vrp_inference.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
