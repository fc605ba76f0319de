"""Test gaps of the shipped POMO teachers (weights/mtlkd/teacher_<variant>_n50.pt) to PyVRP.

    python -m optiforge.benchmarks run vrp_teacher_gaps [--instances 1000]
        [--reference-iterations 1000]
        [--variants CVRP OVRP ...] [--threads 2]

Each teacher runs `train.py test` on its config with `--model.init_args.weights`: the seeded
test set of its variant at n = 50 (`--instances`, PyVRP references of
`--reference-iterations` iterations per instance, the same on every machine, built once and
cached in data/vrp; 1000 ~ the quality of the former 1 s per instance), decoded by
multi-start over all 50 starts x 8 augmentations, every solution checked by the validator.
Writes vrp_teacher_gaps.{json,md} (the model card's table).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.cli import main as train_main
from optiforge.lightning_modules.mtlkd.policy_weights import read_weights, shipped_teacher_path
from optiforge.problems.vrp.pyvrp_solver import DEFAULT_ITERATIONS
from optiforge.problems.vrp.variants import SEEN_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("gap", "feasible", "cost")


def evaluate(name: str, instances: int, iterations: int) -> dict[str, float]:
    """Test metrics of the shipped teacher of `name` on its cached test set."""
    weights = shipped_teacher_path(name, convention="routefinder")  # its instances below
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
            "--model.init_args.feature_scaling",  # the scaling the shipped weights were made with
            str(read_weights(weights).init_args["feature_scaling"]),
            "--data.init_args.convention",
            "routefinder",
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
    metadata = read_weights(weights).metadata
    row.update({"epoch": metadata["epoch"], "global_step": metadata["global_step"]})
    return row


@dataclass(frozen=True)
class Config:
    instances: int = 1000
    reference_iterations: int = DEFAULT_ITERATIONS
    variants: tuple[str, ...] = tuple(SEEN_VARIANTS)
    threads: int = 2


COLUMNS = [
    Column("variant", "variant"),
    Column("optimizer steps", "global_step"),
    Column("test gap %", "gap", ".2f"),
    Column("feasible", "feasible", ".0%"),
    Column("mean cost", "cost", ".3f"),
    Column("ms / instance", "ms_per_instance", ".1f"),
]


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    rows = {
        name: evaluate(name, args.instances, args.reference_iterations) for name in args.variants
    }
    title = (
        f"Shipped teachers, n = 50, {args.instances} seeded test instances per variant, PyVRP "
        f"{args.reference_iterations} iterations per instance as reference, multi-start x 8 "
        f"augmentations, {args.threads} threads"
    )
    table = markdown_table([{"variant": k, **v} for k, v in rows.items()], COLUMNS)
    config = {
        "instances": args.instances,
        "reference_iterations": args.reference_iterations,
        "threads": args.threads,
        "inference": "multistart x 8 augmentations",
    }
    run.write("vrp_teacher_gaps", {"config": config, "rows": rows}, f"{title}\n\n{table}", indent=2)


BENCHMARK = Benchmark(
    "vrp_teacher_gaps",
    main,
    Config,
    smoke=dict(instances=2, reference_iterations=5, variants=("CVRP",), threads=1),
    peers=("pyvrp",),
)

if __name__ == "__main__":
    BENCHMARK.main()
