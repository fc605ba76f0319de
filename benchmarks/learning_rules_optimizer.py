"""BayesCurvature against Adam and SGD with momentum on the reference classifier and the char LM.

Each optimizer trains the same config with `train.py fit` in this process (3 seeds, equal steps, the
best-validation checkpoint tested as `train.py fit` does); the default run fits in under 10 minutes
on one core: the digits CNN (configs/default.yaml) for its full 30 epochs and the char-level
transformer (configs/testbeds/char_lm.yaml + optimizers/adamw_lm.yaml) for 4 of its 10 epochs (100
steps each, validation capped at 20 batches; the test split is evaluated whole). Learning rates:
Adam and BayesCurvature both at the config's 0.003 (the derived rule tends to Adam with lr = s, so
they share it), SGD momentum 0.9 at 0.05 (untuned; 0.3 diverged on the LM).
Time per step is measured separately in one run, alternating the optimizers in rounds on a fixed
batch (forward, backward, step), as a median ratio to Adam.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run learning_rules_optimizer [--seeds 0 1 2]

writes learning_rules_optimizer.{json,md}.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import nn

from optiforge.benchmarks.cli_runs import fit_and_test
from optiforge.benchmarks.harness import Benchmark, Run, interleaved
from optiforge.lightning_modules.char_lm.model import CharTransformer
from optiforge.lightning_modules.classifier_nets import small_cnn
from optiforge.optimizers import BayesCurvature

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TASKS = {
    "digits_cnn": {
        "config": CONFIGS / "default.yaml",
        "overrides": [],
        "metrics": ("acc", "loss"),
        "sgd_lr": 0.05,
    },
    "char_lm": {
        "config": CONFIGS / "testbeds" / "char_lm.yaml",
        "overrides": [
            *("--config", str(CONFIGS / "optimizers" / "adamw_lm.yaml")),
            *("--trainer.max_epochs", "4", "--trainer.limit_val_batches", "20"),
        ],
        "metrics": ("bpc",),
        "sgd_lr": 0.05,
    },
}


def optimizer_args(name: str, sgd_lr: float) -> list[str]:
    """CLI overrides selecting the optimizer (the config's AdamW is replaced)."""
    if name == "Adam":
        return ["--optimizer", "torch.optim.Adam", "--optimizer.lr", "0.003"]
    if name == "SGD momentum":
        return ["--optimizer", "torch.optim.SGD", "--optimizer.lr", str(sgd_lr)] + [
            "--optimizer.momentum",
            "0.9",
        ]
    return ["--optimizer", "optiforge.optimizers.BayesCurvature", "--optimizer.lr", "0.003"]


BUILDERS: dict[str, Callable[[list[nn.Parameter]], torch.optim.Optimizer]] = {
    "Adam": lambda p: torch.optim.Adam(p, lr=0.003),
    "SGD momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "BayesCurvature": lambda p: BayesCurvature(p, lr=0.003),
}


def step_time_ratios(rounds: int, steps: int) -> dict[str, dict[str, float]]:
    """Median seconds per (forward, backward, step) of each optimizer / Adam's, per model."""
    torch.manual_seed(0)
    models = {
        "digits_cnn": (
            small_cnn((1, 8, 8), 10, (32, 64), 0.0),
            torch.rand(64, 1, 8, 8),
            torch.randint(0, 10, (64,)),
        ),
        "char_lm": (
            CharTransformer(65, 64, 128, 4, 2, 0.0),
            torch.randint(0, 65, (32, 64)),
            torch.randint(0, 65, (32, 64)),
        ),
    }
    ratios = {}
    for task, (model, inputs, targets) in models.items():
        optims = {name: build(list(model.parameters())) for name, build in BUILDERS.items()}

        def step(
            opt: torch.optim.Optimizer, model: nn.Module = model, inputs=inputs, targets=targets
        ) -> None:
            opt.zero_grad()
            logits = model(inputs)
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
            )
            loss.backward()
            opt.step()

        timings = interleaved(
            {name: functools.partial(step, opt) for name, opt in optims.items()},
            warmup=0,
            rounds=rounds,
            calls=steps,
        )
        times = {name: timing.seconds for name, timing in timings.items()}
        adam = statistics.median(times["Adam"])
        ratios[task] = {name: statistics.median(t) / adam for name, t in times.items()}
    return ratios


def markdown(runs: list[dict], ratios: dict[str, dict[str, float]]) -> str:
    """Mean ± std over seeds per task and optimizer, with the step-time ratio to Adam."""
    lines = ["| task | optimizer | metric (mean ± std over seeds) | seeds | time/step vs Adam |"]
    lines.append("|---|---|---|---:|---:|")
    for task, spec in TASKS.items():
        for name in BUILDERS:
            rows = [r for r in runs if r["task"] == task and r["optimizer"] == name]
            if not rows:
                continue
            cells = []
            for metric in spec["metrics"]:
                values = np.array([r[metric] for r in rows])
                spread = float(values.std(ddof=1)) if len(values) > 1 else 0.0
                cells.append(f"test/{metric} {values.mean():.4f} ± {spread:.4f}")
            lines.append(
                f"| {task} | {name} | {'; '.join(cells)} | {len(rows)} | {ratios[task][name]:.2f} |"
            )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    seeds: tuple[int, ...] = (0, 1, 2)
    tasks: tuple[Literal["digits_cnn", "char_lm"], ...] = ("digits_cnn", "char_lm")
    rounds: int = 5
    batches: int | None = None  # limit on training batches per epoch (smoke preset)


def main(run: Run, args: Config) -> None:
    """Train every (task, optimizer, seed), time the steps, write the table."""
    ratios = step_time_ratios(args.rounds, steps=10)
    limit = ["--trainer.limit_train_batches", str(args.batches)] if args.batches else []
    runs = []
    for task in args.tasks:
        spec = TASKS[task]
        for name in BUILDERS:
            for seed in args.seeds:
                overrides = [*spec["overrides"], *optimizer_args(name, spec["sgd_lr"]), *limit]
                result = fit_and_test(spec["config"], overrides, seed, spec["metrics"])
                runs.append({"task": task, "optimizer": name, "seed": seed, **result})
                run.log(str(runs[-1]))
    record = {
        "runs": runs,
        "step_time_vs_adam": ratios,
        "tasks": {k: v["overrides"] for k, v in TASKS.items()},
    }
    run.write("learning_rules_optimizer", record, markdown(runs, ratios))


BENCHMARK = Benchmark(
    "learning_rules_optimizer",
    main,
    Config,
    smoke=dict(seeds=(0,), tasks=("digits_cnn",), rounds=1, batches=2),
)

if __name__ == "__main__":
    BENCHMARK.main()
