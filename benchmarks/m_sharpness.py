"""m-sharpness experiment (Luo et al. 2025): test accuracy of SGD, SAM, n-SAM, m-SAM for several
micro-batch sizes m, and RW-SAM, on label-noise tasks, several seeds, through the project's CLI.

    python -m benchmarks.m_sharpness [--seeds 0 1 2] [--tasks digits compas] [--wandb]

Each run is `train.py fit` on configs/optimizers/m_sharpness_<task>.yaml with the method's
optimizer given as overrides (the same values as the sibling configs), tested at the final
weights. Wall time per run is recorded, so that costs compare within this run. Writes
benchmarks/results/m_sharpness.json and .md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from train import main as train_main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
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


def run(config: Path, overrides: list[str], seed: int, run_name: str | None) -> tuple[float, float]:
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
            "--config",
            str(config),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tasks", nargs="+", default=["digits", "compas"])
    parser.add_argument("--wandb", action="store_true", help="log curves and the table to W&B")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for task in args.tasks:
        config = ROOT / "configs" / "optimizers" / f"m_sharpness_{task}.yaml"
        batch_size = 128
        for method, overrides in methods(batch_size).items():
            accuracies, seconds = [], []
            for seed in args.seeds:
                name = f"{task}-{method}-seed{seed}".replace(" ", "_") if args.wandb else None
                accuracy, elapsed = run(config, overrides, seed, name)
                accuracies.append(accuracy)
                seconds.append(elapsed)
                print(f"{task} {method} seed {seed}: test acc {accuracy:.4f} ({elapsed:.0f} s)")
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
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "m_sharpness.json").write_text(
        json.dumps({"seeds": args.seeds, "rows": rows}, indent=2)
    )
    lines = [
        "| task | method | test acc (mean +- std) | seeds | s / run |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['task']} | {row['method']} | {row['mean']:.4f} +- {row['std']:.4f} "
            f"| {len(row['test_acc'])} | {row['seconds_mean']:.0f} |"
        )
    table = "\n".join(lines) + "\n"
    (RESULTS / "m_sharpness.md").write_text(table)
    print(table)
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


if __name__ == "__main__":
    main()
