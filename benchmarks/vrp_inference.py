"""Greedy inference time per instance and peak memory of the MTL-KD models at n = 100..1000.

    python -m optiforge.benchmarks run vrp_inference [--sizes 100 200 500 1000]
        [--batch-sizes 32 16 4 2]
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
Writes vrp_inference.{json,md}.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
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

    from optiforge.benchmarks.teacher_training_vs_rl4co import RL4CO_POLICY

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


@dataclass(frozen=True)
class Config:
    """One batch size per size; `one` (internal): measure one model in this process and print
    its row, which the parent runs in a fresh process per (model, size)."""

    sizes: tuple[int, ...] = (100, 200, 500, 1000)
    batch_sizes: tuple[int, ...] = (32, 16, 4, 2)
    repeats: int = 3
    threads: int = 1
    one: Literal[MODELS] | None = None

    def __post_init__(self) -> None:
        if len(self.batch_sizes) != len(self.sizes):
            raise ValueError("batch_sizes needs one value per sizes value")


COLUMNS = [
    Column("n", "n"),
    Column("batch", "batch_size"),
    Column("model", "model"),
    Column("ms / instance", "ms_per_instance", ".1f"),
    Column("model / RL4CO time", "ratio", ".2f", missing=""),
    Column("peak RSS MiB", "peak_rss_mib", ".0f"),
    Column("decode RSS increase MiB", "decode_rss_increase_mib", ".0f"),
]


def main(run: Run, args: Config) -> None:
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
                sys.executable, "-m", "optiforge.benchmarks.vrp_inference", "--one", model,
                "--sizes", str(n), "--batch-sizes", str(batch_size),
                "--repeats", str(args.repeats), "--threads", str(args.threads),
            ]  # fmt: skip
            done = subprocess.run(
                command, cwd=ROOT, env=environment, capture_output=True, text=True, check=True
            )
            row = {"n": n, "batch_size": batch_size, "model": model}
            row.update(json.loads(done.stdout.strip().splitlines()[-1]))
            rows.append(row)
            run.log(str(row))
    peer_ms = {row["n"]: row["ms_per_instance"] for row in rows if row["model"] == PEER}
    for row in rows:
        row["ratio"] = None if row["model"] == PEER else row["ms_per_instance"] / peer_ms[row["n"]]
    title = f"CVRP greedy decoding, {args.threads} thread(s), median of {args.repeats}"
    config = {"threads": args.threads, "repeats": args.repeats, "variant": "CVRP"}
    run.write(
        "vrp_inference",
        {"config": config, "rows": rows},
        f"{title}\n\n{markdown_table(rows, COLUMNS)}",
        indent=2,
    )


BENCHMARK = Benchmark(
    "vrp_inference",
    main,
    Config,
    smoke=dict(sizes=(10,), batch_sizes=(2,), repeats=1),
    peers=("rl4co",),
)

if __name__ == "__main__":
    BENCHMARK.main()
