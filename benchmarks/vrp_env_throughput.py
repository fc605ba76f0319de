"""VRP environment throughput: instances x steps per second of uniform random feasible rollouts
(reset + mask + sample + step until every instance is done) for each of the 16 variants.

    python -m benchmarks.vrp_env_throughput [--num-customers 100] [--batch-size 512]
        [--rounds 3] [--threads 1] [--device cpu]

Prints a table, writes benchmarks/results/vrp_env_throughput.json and .md. The median over
`rounds` rollouts (different seeds) is reported. The peer, RL4CO's `MTVRPEnv`, is measured in the
same run only when `rl4co` is importable; otherwise the reason is recorded (see PEER_MISSING).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from problems.vrp.env import random_feasible_rollout
from problems.vrp.generator import generate
from problems.vrp.variants import ALL_VARIANTS

RESULTS = Path(__file__).resolve().parent / "results"
GOAL_RATIO = 2.0  # issue 5: ours >= 2x RL4CO's MTVRPEnv
PEER_MISSING = (
    "RL4CO MTVRPEnv not measured: rl4co is not importable. Install it with the bench extra "
    "(`pip install -e '.[bench]'`), which keeps importlib_metadata < 10: importlib_metadata "
    "10.2.0 on PyPI depends on lazy-importer 0.1.0 (no author, no source URL), which upstream "
    "python/importlib_metadata does not declare. (hoptorch, pulled by torchrl, is declared "
    "upstream by pytorch/rl.)"
)


def measure(name: str, n: int, batch_size: int, rounds: int, device: str) -> dict[str, float]:
    """Median seconds and instance-steps per second of `rounds` random rollouts of `name`."""
    seconds, steps = [], []
    for r in range(rounds):
        batch = generate(name, n, batch_size, seed=r, device=device)
        gen = torch.Generator(device).manual_seed(r)
        start = time.perf_counter()
        state = random_feasible_rollout(batch, gen)
        if device != "cpu":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        steps.append(len(state.actions))
    sec, num_steps = statistics.median(seconds), statistics.median(steps)
    rate = batch_size * num_steps / sec
    return {"seconds": sec, "steps": num_steps, "instance_steps_per_s": rate}


def table(rows: dict[str, dict[str, float]]) -> str:
    lines = [
        "| variant | steps | seconds | instance x steps / s |",
        "|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['steps']:.0f} | {row['seconds']:.3f} | "
            f"{row['instance_steps_per_s']:,.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-customers", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]  # the machine is shared: record how busy it was
    if importlib.util.find_spec("rl4co") is not None:
        raise SystemExit("rl4co is importable: add the MTVRPEnv measurement before reporting")
    rows = {
        name: measure(name, args.num_customers, args.batch_size, args.rounds, args.device)
        for name in ALL_VARIANTS
    }
    md = (
        f"# VRP env throughput (n = {args.num_customers}, batch {args.batch_size}, "
        f"{args.device}, {args.threads} thread(s), median of {args.rounds}, "
        f"1-min load average {load:.1f} at start)\n\n"
        f"{table(rows)}\n\n{PEER_MISSING}\n"
    )
    print(md)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "vrp_env_throughput.md").write_text(md)
    record = {
        "config": vars(args),
        "torch": torch.__version__,
        "machine": platform.platform(),
        "load_average_1min": load,
        "ours": rows,
        "peer": None,
        "peer_missing": PEER_MISSING,
        "goal_ratio": GOAL_RATIO,
    }
    (RESULTS / "vrp_env_throughput.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
