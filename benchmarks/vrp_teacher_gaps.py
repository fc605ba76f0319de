"""Test gaps of the shipped POMO teachers (weights/mtlkd/teacher_<variant>_n50.pt) to PyVRP.

    python -m benchmarks.vrp_teacher_gaps [--instances 1000] [--reference-iterations 1000]
        [--variants CVRP OVRP ...] [--threads 2]

Each teacher runs `train.py test` on its config with `--model.init_args.weights`: the seeded
test set of its variant at n = 50 (`--instances`, PyVRP references of
`--reference-iterations` iterations per instance, the same on every machine, built once and
cached in data/vrp; 1000 ~ the quality of the former 1 s per instance), decoded by
multi-start over all 50 starts x 8 augmentations, every solution checked by the validator.
Writes benchmarks/results/vrp_teacher_gaps.{json,md} (the model card's table).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from optiforge.lightning_modules.mtlkd.policy_weights import read_weights, shipped_teacher_path
from optiforge.problems.vrp.pyvrp_solver import DEFAULT_ITERATIONS
from optiforge.problems.vrp.variants import SEEN_VARIANTS
from train import main as train_main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
METRICS = ("gap", "feasible", "cost")


def evaluate(name: str, instances: int, iterations: int) -> dict[str, float]:
    """Test metrics of the shipped teacher of `name` on its cached test set."""
    weights = shipped_teacher_path(name)
    cli = train_main(
        [
            "test",
            "--config",
            str(ROOT / "configs" / "mtlkd" / "base.yaml"),
            "--config",
            str(ROOT / "configs" / "mtlkd" / f"teacher_{name.lower()}.yaml"),
            "--model.init_args.weights",
            str(weights),
            "--model.init_args.test_inference",
            "augment",
            "--data.init_args.test_instances",
            str(instances),
            "--data.init_args.reference_iterations",
            str(iterations),
            "--data.init_args.reference_workers",
            "2",
            "--data.init_args.cache_dir",
            str(ROOT / "data" / "vrp"),
            "--trainer.logger",
            "false",
            "--trainer.enable_progress_bar",
            "false",
        ]
    )
    metrics = cli.trainer.callback_metrics
    row = {name: float(metrics[f"test/{name}"]) for name in METRICS}
    row["ms_per_instance"] = float(metrics[f"test/{name}/n50/ms_per_instance"])
    blob = read_weights(weights)
    row.update({"epoch": blob["epoch"], "global_step": blob["global_step"]})
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--reference-iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--variants", nargs="+", default=list(SEEN_VARIANTS))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rows = {
        name: evaluate(name, args.instances, args.reference_iterations) for name in args.variants
    }
    lines = [
        f"Shipped teachers, n = 50, {args.instances} seeded test instances per variant, PyVRP "
        f"{args.reference_iterations} iterations per instance as reference, multi-start x 8 "
        f"augmentations, {args.threads} threads",
        "",
        "| variant | optimizer steps | test gap % | feasible | mean cost | ms / instance |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['global_step']} | {row['gap']:.2f} | {row['feasible']:.0%} "
            f"| {row['cost']:.3f} | {row['ms_per_instance']:.1f} |"
        )
    RESULTS.mkdir(exist_ok=True)
    config = {
        "instances": args.instances,
        "reference_iterations": args.reference_iterations,
        "threads": args.threads,
        "inference": "multistart x 8 augmentations",
    }
    (RESULTS / "vrp_teacher_gaps.json").write_text(
        json.dumps({"config": config, "rows": rows}, indent=2)
    )
    (RESULTS / "vrp_teacher_gaps.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
