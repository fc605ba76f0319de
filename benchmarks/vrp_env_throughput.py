"""VRP environment throughput: instances x steps per second of uniform random feasible rollouts
(reset + mask + sample + step until every instance is done) for each of the 16 variants.

    python -m optiforge.benchmarks run vrp_env_throughput [--num-customers 100] [--batch-size 512]
        [--rounds 3] [--threads 1] [--device cpu]

Prints a table, writes vrp_env_throughput.json and .md. The median over
`rounds` rollouts (different seeds) is reported. The peer, RL4CO's `MTVRPEnv`, is measured in the
same run (variant by variant, interleaved) when `rl4co` is importable (bench extra); otherwise
the reason is recorded (see PEER_MISSING).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time
from dataclasses import asdict, dataclass

import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.problems.vrp.env import random_feasible_rollout
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.variants import ALL_VARIANTS

GOAL_RATIO = 2.0  # throughput goal: ours >= 2x RL4CO's MTVRPEnv
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


def measure_rl4co(name: str, n: int, batch_size: int, rounds: int) -> dict[str, float]:
    """The same random feasible rollouts in RL4CO's MTVRPEnv (its preset for the variant, its
    own generator; RL4CO's backhaul preset may differ from our strict default)."""
    from rl4co.envs.routing import MTVRPEnv, MTVRPGenerator

    env = MTVRPEnv(generator=MTVRPGenerator(num_loc=n, variant_preset=name.lower()))
    seconds, steps = [], []
    for r in range(rounds):
        torch.manual_seed(r)
        td = env.reset(batch_size=[batch_size])
        gen = torch.Generator().manual_seed(r)
        start = time.perf_counter()
        count = 0
        while not bool(td["done"].all()):
            action = torch.multinomial(td["action_mask"].float(), 1, generator=gen).squeeze(-1)
            td.set("action", action)
            td = env.step(td)["next"]
            count += 1
        seconds.append(time.perf_counter() - start)
        steps.append(count)
    sec, num_steps = statistics.median(seconds), statistics.median(steps)
    return {
        "seconds": sec,
        "steps": num_steps,
        "instance_steps_per_s": batch_size * num_steps / sec,
    }


def table(rows: dict[str, dict[str, float]], peer: dict[str, dict[str, float]] | None) -> str:
    lines = [
        "| variant | steps | seconds | instance x steps / s |"
        + (" RL4CO steps | RL4CO instance x steps / s | ours / RL4CO |" if peer else ""),
        "|---|---|---|---|" + ("---|---|---|" if peer else ""),
    ]
    for name, row in rows.items():
        line = (
            f"| {name} | {row['steps']:.0f} | {row['seconds']:.3f} | "
            f"{row['instance_steps_per_s']:,.0f} |"
        )
        if peer:
            ratio = row["instance_steps_per_s"] / peer[name]["instance_steps_per_s"]
            line += (
                f" {peer[name]['steps']:.0f} | {peer[name]['instance_steps_per_s']:,.0f} "
                f"| {ratio:.2f} |"
            )
        lines.append(line)
    return "\n".join(lines)


def summary(rows: dict[str, dict[str, float]], peer: dict[str, dict[str, float]] | None) -> str:
    if not peer:
        return PEER_MISSING
    ratios = [rows[n]["instance_steps_per_s"] / peer[n]["instance_steps_per_s"] for n in rows]
    met = "met" if min(ratios) >= GOAL_RATIO else "missed"
    return (
        f"ours / RL4CO MTVRPEnv: min {min(ratios):.2f}, median {statistics.median(ratios):.2f}, "
        f"max {max(ratios):.2f} over the 16 variants (goal >= {GOAL_RATIO:g}: {met})"
    )


@dataclass(frozen=True)
class Config:
    num_customers: int = 100
    batch_size: int = 512
    rounds: int = 3
    threads: int = 1
    device: str = "cpu"


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]  # the machine is shared: record how busy it was
    rows, peer = {}, {} if importlib.util.find_spec("rl4co") is not None else None
    for name in ALL_VARIANTS:  # interleaved, so drifts in machine load hit both
        rows[name] = measure(name, args.num_customers, args.batch_size, args.rounds, args.device)
        if peer is not None:
            peer[name] = measure_rl4co(name, args.num_customers, args.batch_size, args.rounds)
    md = (
        f"# VRP env throughput (n = {args.num_customers}, batch {args.batch_size}, "
        f"{args.device}, {args.threads} thread(s), median of {args.rounds}, "
        f"1-min load average {load:.1f} at start)\n\n"
        f"{table(rows, peer)}\n\n{summary(rows, peer)}\n"
    )
    record = {
        "config": asdict(args),
        "load_average_1min": load,
        "ours": rows,
        "peer": peer,
        "peer_missing": None if peer else PEER_MISSING,
        "goal_ratio": GOAL_RATIO,
    }
    run.write("vrp_env_throughput", record, md, indent=2)


BENCHMARK = Benchmark(
    "vrp_env_throughput", main, Config, smoke=dict(num_customers=10, batch_size=8, rounds=1)
)

if __name__ == "__main__":
    BENCHMARK.main()
