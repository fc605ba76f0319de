"""Convection boundary-value problem (Barthakur & Chamon): weighted-penalty PINN vs equality
constraints on the initial and boundary conditions, equal step budget, several seeds.

    python -m optiforge.benchmarks run equality_constrained_pinn [--seeds 0 1 2] [--beta 10]
        [--epochs 10]

Each run is `train.py fit` on configs/constrained/convection_pinn_lagrangian.yaml, with the overlay
convection_pinn_penalty.yaml for the penalty PINN (500 full-batch steps per epoch), tested at the
final weights: relative L2 error to sin(x - beta t) on a 256 x 100 grid and the largest initial /
periodic-boundary violation on 1000 points.
Writes equality_constrained_pinn.json and .md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import mean

import torch

from optiforge.benchmarks.cli_runs import fit_and_test
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table, mean_std

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "constrained"
# The equality-constrained config; another method is an overlay on it.
BASE = "convection_pinn_lagrangian.yaml"
METHODS = {
    "PINN penalty (1, 100, 100)": "convection_pinn_penalty.yaml",
    "equality-constrained (ours)": "convection_pinn_lagrangian.yaml",
}
METRICS = ("rel_l2", "max_boundary_violation", "max_ic_violation", "max_bc_violation")
HEADERS = ("rel L2", "max boundary violation", "max IC violation", "max BC violation")


@dataclass(frozen=True)
class Config:
    """Seeds, the convection speed beta, epochs of 500 full-batch steps (`batches` limits them)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    beta: float = 10.0
    epochs: int = 10
    batches: int | None = None


def run(run: Run, args: Config) -> None:
    torch.set_num_threads(1)
    rows = []
    limit = ["--trainer.limit_train_batches", str(args.batches)] if args.batches else []
    for method, config in METHODS.items():
        runs = []
        for seed in args.seeds:
            overrides = ["--model.beta", str(args.beta), "--trainer.max_epochs", str(args.epochs)]
            overlay = [] if config == BASE else ["--config", str(CONFIGS / config)]
            fit = fit_and_test(CONFIGS / BASE, [*overlay, *overrides, *limit], seed, METRICS)
            runs.append(fit)
            run.log(f"{method} seed {seed}: rel L2 {fit['rel_l2']:.4f} ({fit['seconds']:.0f} s)")
        rows.append({"method": method, "config": config, "runs": runs})
    columns = [Column("method", "method")] + [
        Column(header, lambda row, key=key: mean_std([r[key] for r in row["runs"]]))
        for header, key in zip(HEADERS, METRICS, strict=True)
    ]
    columns.append(Column("s / run", lambda row: mean([r["seconds"] for r in row["runs"]]), ".0f"))
    head = (
        f"Convection beta = {args.beta:g}, {args.epochs * 500} Adam steps, seeds {list(args.seeds)}"
    )
    config = {"beta": args.beta, "steps": args.epochs * 500, "seeds": args.seeds}
    table = markdown_table(rows, columns)
    run.write("equality_constrained_pinn", {"config": config, "rows": rows}, f"{head}\n\n{table}")


BENCHMARK = Benchmark(
    "equality_constrained_pinn", run, Config, smoke=dict(seeds=(0,), epochs=1, batches=3)
)

if __name__ == "__main__":
    BENCHMARK.main()
