"""Convection boundary-value problem (Barthakur & Chamon): weighted-penalty PINN vs equality
constraints on the initial and boundary conditions, equal step budget, several seeds.

    python -m benchmarks.equality_constrained_pinn [--seeds 0 1 2] [--beta 10] [--epochs 10]

Each run is `train.py fit` on configs/constrained/convection_pinn_<method>.yaml (500 full-batch
steps per epoch), tested at the final weights: relative L2 error to sin(x - beta t) on a
256 x 100 grid and the largest initial / periodic-boundary violation on 1000 points.
Writes benchmarks/results/equality_constrained_pinn.json and .md.
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
    "PINN penalty (1, 100, 100)": "convection_pinn_penalty.yaml",
    "equality-constrained (ours)": "convection_pinn_lagrangian.yaml",
}
METRICS = ("rel_l2", "max_boundary_violation", "max_ic_violation", "max_bc_violation")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--beta", type=float, default=10.0)
    parser.add_argument("--epochs", type=int, default=10, help="x 500 full-batch steps")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for method, config in METHODS.items():
        runs = []
        for seed in args.seeds:
            overrides = ["--model.beta", str(args.beta), "--trainer.max_epochs", str(args.epochs)]
            run = fit_and_test(ROOT / "configs" / "constrained" / config, overrides, seed, METRICS)
            runs.append(run)
            print(
                f"{method} seed {seed}: rel L2 {run['rel_l2']:.4f}, max boundary violation "
                f"{run['max_boundary_violation']:.4f} ({run['seconds']:.0f} s)"
            )
        rows.append({"method": method, "config": config, "runs": runs})
    lines = [
        f"Convection beta = {args.beta:g}, {args.epochs * 500} Adam steps, seeds {args.seeds}",
        "",
        "| method | rel L2 | max boundary violation | max IC violation | max BC violation "
        "| s / run |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = []
        for name in METRICS:
            values = [run[name] for run in row["runs"]]
            cells.append(f"{statistics.mean(values):.4f} +- {statistics.pstdev(values):.4f}")
        seconds = statistics.mean(run["seconds"] for run in row["runs"])
        lines.append(f"| {row['method']} | " + " | ".join(cells) + f" | {seconds:.0f} |")
    table = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    config = {"beta": args.beta, "steps": args.epochs * 500, "seeds": args.seeds}
    (RESULTS / "equality_constrained_pinn.json").write_text(
        json.dumps({"config": config, "rows": rows}, indent=2)
    )
    (RESULTS / "equality_constrained_pinn.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
