"""m-sharpness experiment (Luo et al. 2025): test accuracy of SGD, SAM, n-SAM, m-SAM for several
micro-batch sizes m, and RW-SAM, on label-noise tasks, several seeds, through the project's CLI.

    python -m optiforge.benchmarks run m_sharpness [--seeds 0 1 2] [--tasks digits compas] [--wandb]

Each run is `train.py fit` on the task's testbed configs and configs/optimizers/sgd.yaml with the
method's optimizer given as overrides (the same values as configs/optimizers/sam.yaml and the
configs stacked on it), tested at the final weights. Wall time per run is recorded, so that costs
compare within this run. Writes benchmarks/results/m_sharpness.json and .md.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.cli import main as train_main

ROOT = Path(__file__).resolve().parents[1]
# Per task, its configs under configs/: the testbed (and the study's budget), then SGD.
TASK_CONFIGS = {
    "digits": (
        "testbeds/digits_mlp_noisy.yaml",
        "testbeds/m_sharpness_digits.yaml",
        "optimizers/sgd.yaml",
    ),
    "compas": (
        "testbeds/compas_mlp.yaml",
        "testbeds/m_sharpness_compas.yaml",
        "optimizers/sgd.yaml",
    ),
}
BATCH_SIZE = 128  # both testbeds' batch size: m-SAM's full-batch m and n-SAM's descent batch
BASE = [
    "--optimizer.base_optimizer",
    "torch.optim.SGD",
    "--optimizer.base_optimizer.lr",
    "0.05",
    "--optimizer.base_optimizer.momentum",
    "0.9",
    "--optimizer.base_optimizer.weight_decay",
    "0.0005",
    "--optimizer.rho",
    "0.1",
]


def methods(batch_size: int) -> dict[str, list[str]]:
    """CLI overrides per method; m-SAM with m = batch size is SAM computed the m-SAM way."""
    table = {
        "SGD": [],
        "SAM": ["--optimizer", "optiforge.optimizers.SAM", *BASE],
        "n-SAM": [
            "--optimizer",
            "optiforge.optimizers.NSAM",
            *BASE,
            "--optimizer.descent_batch_size",
            str(batch_size),
            "--data.batch_size",
            str(2 * batch_size),
        ],
    }
    for temperature in ("0.1", "1.0", "10.0"):
        table[f"RW-SAM lambda={temperature}"] = [
            "--optimizer",
            "optiforge.optimizers.RWSAM",
            *BASE,
            "--optimizer.temperature",
            temperature,
        ]
    for m in (batch_size, 32, 8):
        name = f"m-SAM m={m}" + (" (full batch)" if m == batch_size else "")
        table[name] = [
            "--optimizer",
            "optiforge.optimizers.MSAM",
            *BASE,
            "--optimizer.micro_batch_size",
            str(m),
        ]
    return table


def fit(
    configs: list[Path], overrides: list[str], seed: int, run_name: str | None
) -> tuple[float, float]:
    """Fit and test one method; returns (test accuracy at the final weights, seconds).

    With a `run_name` the run logs its curves to W&B (group "m_sharpness"), else no logger."""
    logging = (
        [
            "--trainer.logger.init_args.group",
            "m_sharpness",
            "--trainer.logger.init_args.name",
            run_name,
        ]
        if run_name
        else ["--trainer.logger", "false"]
    )
    start = time.perf_counter()
    cli = train_main(
        [
            "fit",
            *[arg for config in configs for arg in ("--config", str(config))],
            "--seed_everything",
            str(seed),
            "--data.seed",
            str(seed),
            *logging,
            "--trainer.enable_progress_bar",
            "false",
            "--trainer.enable_model_summary",
            "false",
            *overrides,
        ]
    )
    seconds = time.perf_counter() - start
    if run_name:
        import wandb

        wandb.finish()  # the next run must not reuse this one
    return float(cli.trainer.callback_metrics["test/acc"]), seconds


COLUMNS = [
    Column("task", "task"),
    Column("method", "method"),
    Column("test acc (mean +- std)", lambda r: f"{r['mean']:.4f} +- {r['std']:.4f}"),
    Column("seeds", lambda r: len(r["test_acc"])),
    Column("s / run", "seconds_mean", ".0f"),
]


@dataclass(frozen=True)
class Config:
    seeds: tuple[int, ...] = (0, 1, 2)
    tasks: tuple[str, ...] = ("digits", "compas")
    wandb: bool = False  # log curves and the table to W&B
    batches: int | None = None  # limit on training batches per epoch (smoke preset)
    methods: tuple[str, ...] | None = None  # a subset of the methods by name (None: all)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.methods or ()) - set(methods(BATCH_SIZE)))
        if unknown:
            known = list(methods(BATCH_SIZE))
            raise ValueError(f"--methods: unknown {unknown}; choose from {known}")


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(1)
    limit = ["--trainer.limit_train_batches", str(args.batches)] if args.batches else []
    rows = []
    for task in args.tasks:
        configs = [ROOT / "configs" / name for name in TASK_CONFIGS[task]]
        for method, overrides in methods(BATCH_SIZE).items():
            if args.methods is not None and method not in args.methods:
                continue
            accuracies, seconds = [], []
            for seed in args.seeds:
                name = f"{task}-{method}-seed{seed}".replace(" ", "_") if args.wandb else None
                accuracy, elapsed = fit(configs, [*overrides, *limit], seed, name)
                accuracies.append(accuracy)
                seconds.append(elapsed)
                run.log(f"{task} {method} seed {seed}: test acc {accuracy:.4f} ({elapsed:.0f} s)")
            rows.append(
                {
                    "task": task,
                    "method": method,
                    "test_acc": accuracies,
                    "mean": statistics.mean(accuracies),
                    "std": statistics.pstdev(accuracies),
                    "seconds_mean": statistics.mean(seconds),
                }
            )
    run.write(
        "m_sharpness", {"seeds": list(args.seeds), "rows": rows}, markdown_table(rows, COLUMNS)
    )
    if args.wandb:
        log_to_wandb(rows)


def log_to_wandb(rows: list[dict]) -> None:
    """One W&B run with the results table (offline without credentials)."""
    import wandb

    from optiforge.callbacks.wandb_logger import resolve_wandb_mode

    run = wandb.init(project="optiforge", job_type="m_sharpness", mode=resolve_wandb_mode("auto"))
    columns = ["task", "method", "mean", "std", "seconds_mean"]
    run.log(
        {"m_sharpness": wandb.Table(columns=columns, data=[[r[c] for c in columns] for r in rows])}
    )
    run.finish()


SMOKE = dict(seeds=(0,), tasks=("compas",), batches=2, methods=("SAM", "m-SAM m=8"))
BENCHMARK = Benchmark("m_sharpness", main, Config, smoke=SMOKE)

if __name__ == "__main__":
    BENCHMARK.main()
