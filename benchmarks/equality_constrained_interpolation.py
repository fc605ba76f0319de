"""Interpolating classifier (Barthakur & Chamon, per-sample variant): ERM vs per-sample
CE = 0 equality constraints on a seeded subset of the digits training split, equal step budget.

    python -m optiforge.benchmarks run equality_constrained_interpolation [--seeds 0 1]
        [--label-noise 0]

Each run is `train.py fit` on configs/constrained/digits_interpolation_lagrangian.yaml, with the
overlay digits_interpolation_erm.yaml for ERM (1000 full-batch AdamW steps), tested at the final
weights: test accuracy, and on the constrained training samples the largest CE, the share with CE <=
0.05 and the accuracy. `--data.seed` is the run's seed, so split, constrained subset and
initialization all change with it. With label noise the constrained subset holds noisy samples too.
Writes
equality_constrained_interpolation.json and .md.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import torch

from optiforge.benchmarks.cli_runs import fit_and_test
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "constrained"
# The equality-constrained config; another method is an overlay on it.
BASE = "digits_interpolation_lagrangian.yaml"
METHODS = {
    "ERM": "digits_interpolation_erm.yaml",
    "equality-constrained": "digits_interpolation_lagrangian.yaml",
}
METRICS = ("acc", "constrained_loss_max", "constrained_satisfied", "constrained_acc")
COLUMNS = [
    Column("label noise", "label_noise", "g"),
    Column("method", "method"),
    *(
        Column(header, lambda row, key=key: f"{row[key]['mean']:.4f} +- {row[key]['std']:.4f}")
        for header, key in zip(
            ("test acc", "max CE on the subset", "satisfied", "subset acc"), METRICS, strict=True
        )
    ),
    Column("s / run", lambda row: row["seconds"]["mean"], ".0f"),
]


@dataclass(frozen=True)
class Config:
    """Seeds and label-noise levels (`batches` limits the steps, for the smoke preset)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    label_noise: tuple[float, ...] = (0.0, 0.2)
    batches: int | None = None


def run(run: Run, args: Config) -> None:
    torch.set_num_threads(1)
    rows = []
    limit = ["--trainer.limit_train_batches", str(args.batches)] if args.batches else []
    for noise in args.label_noise:
        for method, config in METHODS.items():
            runs = []
            for seed in args.seeds:
                overlay = [] if config == BASE else ["--config", str(CONFIGS / config)]
                overrides = [*overlay, "--data.label_noise", str(noise), *limit]
                fit = {"seed": seed, **fit_and_test(CONFIGS / BASE, overrides, seed, METRICS)}
                runs.append(fit)
                run.log(f"{noise} {method} {seed}: " + ", ".join(f"{fit[m]:.4f}" for m in METRICS))
            summary = {}
            for name in (*METRICS, "seconds"):
                values = [fit[name] for fit in runs]
                summary[name] = {"mean": statistics.mean(values), "std": statistics.pstdev(values)}
            rows.append(
                {"label_noise": noise, "method": method, "config": config, "runs": runs, **summary}
            )
    config = {
        "seeds": list(args.seeds),
        "label_noise": list(args.label_noise),
        "steps": 1000,
        "constrained_samples": 100,
        "satisfaction_tol": 0.05,
        "std": "population (pstdev) over seeds",
    }
    head = (
        f"Digits, {config['steps']} full-batch steps, {config['constrained_samples']} constrained "
        f"samples, seeds {config['seeds']}; satisfied = CE <= {config['satisfaction_tol']}"
    )
    run.write(
        "equality_constrained_interpolation",
        {"config": config, "rows": rows},
        f"{head}\n\n{markdown_table(rows, COLUMNS)}",
    )


BENCHMARK = Benchmark(
    "equality_constrained_interpolation",
    run,
    Config,
    smoke=dict(seeds=(0,), label_noise=(0.2,), batches=3),
    nonnegative=("label_noise",),
)

if __name__ == "__main__":
    BENCHMARK.main()
