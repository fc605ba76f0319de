"""The README's testbed runs: the reference classifier (`python train.py`) and the char-level
transformer (`python train.py fit --config configs/testbeds/char_lm.yaml --config
configs/optimizers/adamw_lm.yaml`), trained in this process with the README's configs.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run testbeds [--testbeds classifier char_lm]

Each run is `train.py fit` at seed 0 (the CLI's default) and the test of the best-validation
checkpoint that `train.py fit` runs after training. Recorded per testbed: the test metrics, the
best validation metric (the checkpoint's monitor), and the wall seconds of fit + test with the
number of torch threads, since the time depends on the machine. The paper preset is the README's
full runs (digits CNN 30 epochs, char LM 10 x 100 steps); the smoke preset caps each to a few
batches. Writes testbeds.json and .md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from optiforge.benchmarks.cli_runs import fit
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
Testbed = Literal["classifier", "char_lm"]
# Per testbed: the README's command, its config and overlays, the test metrics, the monitor.
TESTBEDS: dict[str, dict] = {
    "classifier": {
        "command": "python train.py",
        "config": CONFIGS / "default.yaml",
        "overlays": [],
        "metrics": ("acc", "loss"),
        "monitor": "val/acc",
    },
    "char_lm": {
        "command": "python train.py fit --config configs/testbeds/char_lm.yaml "
        "--config configs/optimizers/adamw_lm.yaml",
        "config": CONFIGS / "testbeds" / "char_lm.yaml",
        "overlays": ["--config", str(CONFIGS / "optimizers" / "adamw_lm.yaml")],
        "metrics": ("bpc", "loss"),
        "monitor": "val/bpc",
    },
}
COLUMNS = [
    Column("testbed", "testbed"),
    Column("command", lambda row: f"`{row['command']}`"),
    Column("epochs", "epochs", "d"),
    Column("best val", lambda row: f"{row['monitor']} {row['best_val']:.4f}"),
    Column("test", lambda row: ", ".join(f"{k} {v:.4f}" for k, v in row["test"].items())),
    Column("fit + test s", "seconds", ".1f"),
    Column("torch threads", "threads", "d"),
]


@dataclass(frozen=True)
class Config:
    """Which testbeds, the seed, and (smoke preset) a cap on batches and epochs."""

    testbeds: tuple[Testbed, ...] = ("classifier", "char_lm")
    seed: int = 0
    batches: int | None = None
    epochs: int | None = None


def limits(args: Config) -> list[str]:
    """Trainer overrides capping the run (none for the README's full runs)."""
    capped = []
    if args.batches:
        for split in ("train", "val", "test"):
            capped += [f"--trainer.limit_{split}_batches", str(args.batches)]
    if args.epochs:
        capped += ["--trainer.max_epochs", str(args.epochs)]
    return capped


def run(run: Run, args: Config) -> None:
    rows = []
    for name in args.testbeds:
        spec = TESTBEDS[name]
        cli, seconds = fit(spec["config"], [*spec["overlays"], *limits(args)], args.seed)
        trainer = cli.trainer
        row = {
            "testbed": name,
            "command": spec["command"],
            "epochs": trainer.current_epoch,
            "monitor": spec["monitor"],
            "best_val": float(trainer.checkpoint_callback.best_model_score),
            "test": {m: float(trainer.callback_metrics[f"test/{m}"]) for m in spec["metrics"]},
            "seconds": seconds,
            "threads": torch.get_num_threads(),
        }
        rows.append(row)
        run.log(
            f"{name}: {row['test']}, best {row['monitor']} {row['best_val']:.4f}, {seconds:.1f} s"
        )
    config = {
        "testbeds": list(args.testbeds),
        "seed": args.seed,
        "limits": limits(args),
        "cpu_count": os.cpu_count(),
    }
    head = (
        f"Seed {args.seed}; best val is the checkpoint's monitor, the test is of that checkpoint; "
        f"seconds: fit + test in one process with {torch.get_num_threads()} torch thread(s) "
        f"on a machine of {os.cpu_count()} CPUs"
    )
    run.write(
        "testbeds", {"config": config, "rows": rows}, f"{head}\n\n{markdown_table(rows, COLUMNS)}"
    )


BENCHMARK = Benchmark(
    "testbeds", run, Config, smoke=dict(testbeds=("classifier", "char_lm"), batches=2, epochs=1)
)

if __name__ == "__main__":
    BENCHMARK.main()
