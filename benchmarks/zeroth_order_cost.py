"""Per-step time and peak extra memory of the zeroth-order optimizers against one backprop step.

Three models on a batch of 64 digits-shaped inputs: the digits CNN of configs/default.yaml
(19.5 K parameters), an MLP 64-2048x3-10 (8.5 M) and an MLP 64-1024x8-10 (7.4 M). In one process:

- time: median seconds per step, the candidates alternated in rounds on a fixed batch, each on
  its own copy of the model; a backprop step is forward + backward + SGD step + zero_grad, a ZO
  step is `optimizer.step(closure)` with a forward-only closure (MeZO: 2 forwards, P3: 2 or 3,
  P4: 3 or 4; one direction); "direction draw" is one regeneration of a seeded direction (a
  step draws it 5 times: 2 perturbations, 2 restorations, the update; the sphere once more);
- memory: peak bytes allocated during one step above the level at its start (weights, optimizer
  state and any gradients left from before), from the torch profiler's memory timeline (CPU)
  or `torch.cuda.max_memory_allocated` (CUDA); "inference" is one forward under `no_grad`.
Ratios are against the backprop step, measured in the same run.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run zeroth_order_cost [--rounds 15]
        [--device cpu]

writes zeroth_order_cost[_cuda].{json,md}.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.profiler._memory_profiler import MemoryProfileTimeline

from optiforge.benchmarks.harness import Benchmark, Column, Run, interleaved, markdown_table
from optiforge.benchmarks.harness.timing import cuda_sync
from optiforge.lightning_modules.classifier_nets import mlp, small_cnn
from optiforge.optimizers import MeZO, TelescopingZO
from optiforge.optimizers.zo_perturbation import SeededDirection

CANDIDATES = ("backprop SGD", "inference", "direction draw", "MeZO", "P3 geometric", "P4 zipf")


def models(device: str) -> dict[str, tuple[nn.Module, torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    x, y = torch.rand(64, 1, 8, 8, device=device), torch.randint(0, 10, (64,), device=device)
    return {
        "digits_cnn": (small_cnn((1, 8, 8), 10, (32, 64), 0.0).to(device), x, y),
        "mlp_3x2048": (mlp((1, 8, 8), 10, (2048,) * 3, 0.0).to(device), x, y),
        "mlp_8x1024": (mlp((1, 8, 8), 10, (1024,) * 8, 0.0).to(device), x, y),
    }


def step_function(name: str, model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Callable:
    """One step of candidate `name` as a function of no arguments."""

    def loss() -> torch.Tensor:
        return nn.functional.cross_entropy(model(x), y)

    if name == "inference":
        return torch.no_grad()(loss)
    if name == "direction draw":  # one regeneration of a seeded direction: z for every entry
        direction = SeededDirection(list(model.parameters()), 0, "gaussian")
        return lambda: [None for _ in direction.scaled(1.0)]
    if name == "backprop SGD":
        sgd = torch.optim.SGD(model.parameters(), lr=0.0)

        def backprop() -> None:
            loss().backward()
            sgd.step()
            sgd.zero_grad(set_to_none=True)  # every step starts without gradients

        return backprop
    if name == "MeZO":
        optimizer = MeZO(model.parameters(), lr=0.0)
    else:
        construction, schedule = name.split()
        optimizer = TelescopingZO(
            model.parameters(), lr=0.0, construction=construction, schedule=schedule
        )
    return lambda: optimizer.step(loss)


def peak_bytes(step: Callable, device: str) -> int:
    """Peak bytes allocated during `step` above the level before it."""
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    with profile(
        activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True
    ) as prof:
        step()
    _, sizes = MemoryProfileTimeline(prof._memory_profile())._coalesce_timeline(torch.device("cpu"))
    levels = [sum(categories) for categories in sizes]
    return max(levels) - levels[0]


def measure(rounds: int, device: str, names: tuple[str, ...]) -> list[dict[str, object]]:
    rows = []
    for model_name, (model, x, y) in models(device).items():
        if model_name not in names:
            continue
        steps = {name: step_function(name, copy.deepcopy(model), x, y) for name in CANDIDATES}
        timings = interleaved(steps, warmup=1, rounds=rounds, sync=cuda_sync(device))
        times = {name: timing.seconds for name, timing in timings.items()}
        memory = {name: peak_bytes(step, device) for name, step in steps.items()}
        base_time = statistics.median(times["backprop SGD"])
        for name in CANDIDATES:
            seconds = statistics.median(times[name])
            row = {
                "model": model_name,
                "parameters": sum(p.numel() for p in model.parameters()),
                "candidate": name,
                "seconds": seconds,
                "time_ratio": seconds / base_time,
                "peak_bytes": memory[name],
                "memory_ratio": memory[name] / memory["backprop SGD"],
            }
            rows.append(row)
            print(
                f"{model_name:11s} {name:13s} {seconds * 1e3:8.3f} ms  x{row['time_ratio']:.2f}  "
                f"peak {memory[name] / 2**20:8.2f} MiB  x{row['memory_ratio']:.2f}"
            )
    return rows


COLUMNS = [
    Column("model", "model"),
    Column("parameters", "parameters"),
    Column("step", "candidate"),
    Column("ms / step", lambda r: r["seconds"] * 1e3, ".3f"),
    Column("x backprop", "time_ratio", ".2f"),
    Column("peak extra MiB", lambda r: r["peak_bytes"] / 2**20, ".2f"),
    Column("x backprop", "memory_ratio", ".2f"),
]


@dataclass(frozen=True)
class Config:
    rounds: int = 15
    device: Literal["cpu", "cuda"] = "cpu"
    models: tuple[Literal["digits_cnn", "mlp_3x2048", "mlp_8x1024"], ...] = (
        "digits_cnn",
        "mlp_3x2048",
        "mlp_8x1024",
    )


def main(run: Run, args: Config) -> None:
    rows = measure(args.rounds, args.device, args.models)
    suffix = "" if args.device == "cpu" else "_cuda"
    title = f"# Zeroth-order step cost vs one backprop step ({args.device}, batch 64, "
    run.write(
        f"zeroth_order_cost{suffix}",
        {"rounds": args.rounds, "device": args.device, "rows": rows},
        f"{title}{args.rounds} rounds)\n\n{markdown_table(rows, COLUMNS)}",
    )


BENCHMARK = Benchmark(
    "zeroth_order_cost", main, Config, smoke=dict(rounds=1, models=("digits_cnn",))
)

if __name__ == "__main__":
    BENCHMARK.main()
