"""Interpolating classifier (Barthakur & Chamon, per-sample variant): ERM vs per-sample
CE = 0 equality constraints on a seeded subset of the digits training split, equal step budget.

    python -m benchmarks.equality_constrained_interpolation [--seeds 0 1 2] [--label-noise 0 0.2]

Each run is `train.py fit` on configs/constrained/digits_interpolation_<method>.yaml (1000
full-batch AdamW steps), tested at the final weights: test accuracy, and on the constrained
training samples the largest CE, the share with CE <= 0.05 and the accuracy. `--data.seed` is
the run's seed, so split, constrained subset and initialization all change with it. With label
noise the constrained subset holds noisy samples too. Writes
benchmarks/results/equality_constrained_interpolation.json and .md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch

from benchmarks.cli_runs import fit_and_test

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
METHODS = {
    "ERM": "digits_interpolation_erm.yaml",
    "equality-constrained": "digits_interpolation_lagrangian.yaml",
}
METRICS = ("acc", "constrained_loss_max", "constrained_satisfied", "constrained_acc")
HEADER = (
    f"{'noise':>5}  {'method':<20} {'seed':>4}  {'test acc':>8}  {'subset max CE':>13}  "
    f"{'satisfied':>9}  {'subset acc':>10}  {'wall s':>6}"
)


def row_text(noise: float, method: str, seed: str, cells: list[str]) -> str:
    widths = (8, 13, 9, 10, 6)
    text = "  ".join(f"{cell:>{width}}" for cell, width in zip(cells, widths, strict=True))
    return f"{noise:>5g}  {method:<20} {seed:>4}  {text}"


def markdown_table(rows: list[dict], config: dict) -> str:
    """The per-method summary (mean +- population std over seeds) as a Markdown table."""
    lines = [
        f"Digits, {config['steps']} full-batch steps, {config['constrained_samples']} constrained "
        f"samples, seeds {config['seeds']}; satisfied = CE <= {config['satisfaction_tol']}",
        "",
        "| label noise | method | test acc | max CE on the subset | satisfied | subset acc "
        "| s / run |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [f"{row[n]['mean']:.4f} +- {row[n]['std']:.4f}" for n in METRICS]
        lines.append(
            f"| {row['label_noise']:g} | {row['method']} | {' | '.join(cells)} "
            f"| {row['seconds']['mean']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--label-noise", type=float, nargs="+", default=[0.0, 0.2])
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    lines = [HEADER]
    for noise in args.label_noise:
        for method, config in METHODS.items():
            runs = []
            for seed in args.seeds:
                overrides = ["--data.label_noise", str(noise)]
                path = ROOT / "configs" / "constrained" / config
                run = {"seed": seed, **fit_and_test(path, overrides, seed, METRICS)}
                runs.append(run)
                cells = [f"{run[name]:.4f}" for name in METRICS] + [f"{run['seconds']:.1f}"]
                lines.append(row_text(noise, method, str(seed), cells))
                print(lines[-1], flush=True)
            summary = {}
            for name in (*METRICS, "seconds"):
                values = [run[name] for run in runs]
                summary[name] = {
                    "mean": statistics.mean(values),
                    "std": statistics.pstdev(values),
                }
            cells = [f"{summary[n]['mean']:.3f}+-{summary[n]['std']:.3f}" for n in METRICS]
            lines.append(
                row_text(noise, method, "mean", [*cells, f"{summary['seconds']['mean']:.1f}"])
            )
            rows.append(
                {"label_noise": noise, "method": method, "config": config, "runs": runs, **summary}
            )
    RESULTS.mkdir(exist_ok=True)
    config = {
        "seeds": args.seeds,
        "label_noise": args.label_noise,
        "steps": 1000,
        "constrained_samples": 100,
        "satisfaction_tol": 0.05,
        "std": "population (pstdev) over seeds",
    }
    (RESULTS / "equality_constrained_interpolation.json").write_text(
        json.dumps({"config": config, "rows": rows}, indent=2)
    )
    (RESULTS / "equality_constrained_interpolation.md").write_text(markdown_table(rows, config))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
