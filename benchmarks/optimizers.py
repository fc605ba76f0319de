"""Per-step wall time and optimizer-state memory of the project's optimizers, as ratios
measured in one run: SAM / SGD, RW-SAM / SAM, ClippedScion / AdamW, and each against the closest
peer in PyPI `pytorch-optimizer` (its SAM and SCION).

    python -m optiforge.benchmarks run optimizers [--steps 20] [--rounds 5] [--threads 1]
        [--mlp-batch 128]
        [--ratios "RW-SAM / SAM" ...]   (a subset; written to optimizers_mlp_b<batch>_subset.*)

Writes optimizers_mlp_b<batch>.json and .md. Timings alternate
between the methods of a pair in rounds (A B A B ...) and use the median per method, so that
load from other processes on the machine hits both sides of a ratio alike. RW-SAM / SAM also
reports its floor 1 + t(probe forward) / t(SAM step), the probe forward timed in the same rounds.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from optiforge.benchmarks.harness import Benchmark, Column, Run, interleaved, markdown_table
from optiforge.lightning_modules.classifier_nets import mlp, small_cnn
from optiforge.optimizers import RWSAM, SAM, ClippedScion, UnconstrainedScion, sharpness_pass

GOALS = {
    "SAM / SGD": 2.05,
    "RW-SAM / SAM": 1.2,
    "ClippedScion / AdamW": 1.5,
    "ClippedScion (bf16 NS) / AdamW": 1.5,
    "SAM / pytorch-optimizer SAM": 1.0,
    "UnconstrainedScion (bf16 NS) / pytorch-optimizer SCION": 1.0,
}


def workloads(mlp_batch: int) -> dict[str, tuple[nn.Module, torch.Tensor, torch.Tensor]]:
    """The two models with a fixed batch each: a 4x1024 MLP and the digits CNN (batch 64)."""
    torch.manual_seed(0)
    return {
        f"mlp_4x1024_b{mlp_batch}": (
            mlp((256,), 10, (1024, 1024, 1024, 1024), 0.0),
            torch.randn(mlp_batch, 256),
            torch.randint(0, 10, (mlp_batch,)),
        ),
        "digits_cnn": (
            small_cnn((1, 8, 8), 10, (32, 64), 0.0),
            torch.rand(64, 1, 8, 8),
            torch.randint(0, 10, (64,)),
        ),
    }


def builders() -> dict[str, Callable[[nn.Module], torch.optim.Optimizer]]:
    """Each method as a function of the model (same base hyperparameters throughout)."""
    from pytorch_optimizer import SAM as PeerSAM
    from pytorch_optimizer import SCION as PeerSCION

    sgd = functools.partial(torch.optim.SGD, lr=0.01, momentum=0.9)
    return {
        "SGD": lambda m: sgd(m.parameters()),
        "AdamW": lambda m: torch.optim.AdamW(m.parameters(), lr=1e-3),
        "SAM": lambda m: SAM(m.parameters(), sgd, rho=0.05),
        "RW-SAM": lambda m: RWSAM(m.parameters(), sgd, rho=0.05),
        "ClippedScion": lambda m: ClippedScion(m.parameters(), lr=0.01, rho=1.0),
        "ClippedScion (bf16 NS)": lambda m: ClippedScion(
            m.parameters(), lr=0.01, rho=1.0, norm_kwargs={"dtype": "bfloat16"}
        ),
        "UnconstrainedScion (bf16 NS)": lambda m: UnconstrainedScion(
            m.parameters(), lr=0.01, norm_kwargs={"dtype": "bfloat16"}
        ),
        "pytorch-optimizer SAM": lambda m: PeerSAM(
            m.parameters(), torch.optim.SGD, rho=0.05, lr=0.01, momentum=0.9
        ),
        "pytorch-optimizer SCION": lambda m: PeerSCION(m.parameters(), lr=0.01),
    }


def step_function(
    name: str, optimizer: torch.optim.Optimizer, model: nn.Module, x: torch.Tensor, y: torch.Tensor
) -> Callable[[], None]:
    """One training step in the calling convention each optimizer documents."""

    def closure() -> torch.Tensor | None:
        optimizer.zero_grad()
        sharp = sharpness_pass(optimizer)
        xb, yb = sharp.select((x, y))
        loss = sharp.reduce(nn.functional.cross_entropy(model(xb), yb, reduction="none"))
        if loss is not None:
            loss.backward()
        return loss

    if name == "pytorch-optimizer SAM":  # its step expects the gradients to exist already

        def peer_step() -> None:
            closure()
            optimizer.step(closure)

        return peer_step
    return lambda: optimizer.step(closure)


FORWARD = "forward only"  # RW-SAM's probe: no-grad forward and per-sample losses


def forward_only(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    """The probe pass RW-SAM adds to SAM, timed alone to give the ratio's floor."""

    @torch.no_grad()
    def probe() -> None:
        nn.functional.cross_entropy(model(x), y, reduction="none")

    return probe


def state_bytes(optimizer: torch.optim.Optimizer | None) -> int:
    """Bytes held in optimizer.state tensors (the memory an optimizer adds beyond the model)."""
    if optimizer is None:
        return 0
    return sum(
        value.numel() * value.element_size()
        for per_param in optimizer.state.values()
        for value in per_param.values()
        if isinstance(value, torch.Tensor)
    )


def measure(
    batch: tuple[nn.Module, torch.Tensor, torch.Tensor], names: list[str], steps: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Median seconds per step and state bytes of each method on one workload, interleaved."""
    model_template, x, y = batch
    setups = {}
    for name in names:
        model = copy.deepcopy(model_template)
        if name == FORWARD:
            optimizer, step = None, forward_only(model, x, y)
        else:
            optimizer = builders()[name](model)
            step = step_function(name, optimizer, model, x, y)
        setups[name] = (step, optimizer)
    timings = interleaved(  # warm-up also creates the optimizer state
        {name: step for name, (step, _) in setups.items()}, warmup=3, rounds=rounds, calls=steps
    )
    return {
        name: {"seconds_per_step": timings[name].median, "state_bytes": state_bytes(opt)}
        for name, (_, opt) in setups.items()
    }


PAIRS = [
    ("SAM / SGD", "SAM", "SGD"),
    ("RW-SAM / SAM", "RW-SAM", "SAM"),
    ("ClippedScion / AdamW", "ClippedScion", "AdamW"),
    ("ClippedScion (bf16 NS) / AdamW", "ClippedScion (bf16 NS)", "AdamW"),
    ("SAM / pytorch-optimizer SAM", "SAM", "pytorch-optimizer SAM"),
    (  # both: Newton-Schulz in bf16, 5 steps, Auto norm, i.e. the same work
        "UnconstrainedScion (bf16 NS) / pytorch-optimizer SCION",
        "UnconstrainedScion (bf16 NS)",
        "pytorch-optimizer SCION",
    ),
]


COLUMNS = [
    Column("workload", "workload"),
    Column("ratio", "ratio"),
    Column("time ratio", "time_ratio", ".2f"),
    Column("floor", "floor", ".2f"),
    Column("goal", lambda row: f"<= {row['goal']}"),
    Column("met", "meets_goal"),
    Column(
        "state MiB (num / den)",
        lambda row: " / ".join(f"{v / 2**20:.2f}" for v in row["state_bytes"].values()),
    ),
]


@dataclass(frozen=True)
class Config:
    steps: int = 20  # steps per timing round
    rounds: int = 5  # interleaved timing rounds
    threads: int = 1  # torch threads
    mlp_batch: int = 128  # batch size on the MLP
    ratios: tuple[Literal[tuple(label for label, _, _ in PAIRS)], ...] | None = None  # None: all


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    rows, results = [], {"threads": args.threads, "steps": args.steps, "rounds": args.rounds}
    results["mlp_batch"] = args.mlp_batch
    for workload, batch in workloads(args.mlp_batch).items():
        for label, numerator, denominator in PAIRS:
            if args.ratios and label not in args.ratios:
                continue
            names = [numerator, denominator] + ([FORWARD] if numerator == "RW-SAM" else [])
            measured = measure(batch, names, args.steps, args.rounds)
            seconds = {k: v["seconds_per_step"] for k, v in measured.items()}
            time_ratio = seconds[numerator] / seconds[denominator]
            top, bottom = measured[numerator]["state_bytes"], measured[denominator]["state_bytes"]
            row = {
                "workload": workload,
                "ratio": label,
                "time_ratio": time_ratio,
                "goal": GOALS[label],
                "meets_goal": time_ratio <= GOALS[label],
                "state_bytes": {numerator: top, denominator: bottom},
                "seconds_per_step": seconds,
            }
            if FORWARD in seconds:  # RW-SAM cannot cost less than SAM plus its probe forward
                row["floor"] = 1 + seconds[FORWARD] / seconds[denominator]
            rows.append(row)
            run.log(f"{workload:11s} {label:45s} time x{time_ratio:5.2f} (goal <= {GOALS[label]})")
    results["rows"] = rows
    stem = f"optimizers_mlp_b{args.mlp_batch}" + ("_subset" if args.ratios else "")
    run.write(stem, results, markdown_table(rows, COLUMNS))


BENCHMARK = Benchmark(
    "optimizers",
    main,
    Config,
    # smoke: the pipeline on two pairs; every pair's Newton-Schulz on the real workloads takes
    # minutes on a CPU even for one step
    smoke=dict(steps=1, rounds=1, mlp_batch=8, ratios=("SAM / SGD", "RW-SAM / SAM")),
    peers=("pytorch_optimizer",),
)

if __name__ == "__main__":
    BENCHMARK.main()
