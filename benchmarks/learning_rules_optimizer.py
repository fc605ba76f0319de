"""BayesCurvature against Adam and SGD with momentum on the reference classifier and the char LM.

Each optimizer trains the same config with `train.py fit` in this process (3 seeds, equal steps,
the best-validation checkpoint tested as `train.py fit` does); the default run fits in under 10
minutes on one core: the digits CNN (configs/default.yaml) for its full 30 epochs and the
char-level transformer (configs/char_lm/tinyshakespeare_adamw.yaml) for 4 of its 10 epochs (100
steps each, validation capped at 20 batches; the test split is evaluated whole). Learning rates:
Adam and BayesCurvature both at the config's 0.003 (the derived rule tends to Adam with lr = s,
so they share it), SGD momentum 0.9 at 0.05 (untuned; 0.3 diverged on the LM). Time per step
is measured separately in one run, alternating the optimizers in rounds on a fixed batch
(forward, backward, step), as a median ratio to Adam.

    OMP_NUM_THREADS=1 python -m benchmarks.learning_rules_optimizer [--seeds 0 1 2]

writes benchmarks/results/learning_rules_optimizer.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from benchmarks.cli_runs import fit_and_test
from benchmarks.figures import RESULTS
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
        "config": CONFIGS / "char_lm" / "tinyshakespeare_adamw.yaml",
        "overrides": ["--trainer.max_epochs", "4", "--trainer.limit_val_batches", "20"],
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
        times: dict[str, list[float]] = {name: [] for name in optims}
        for _ in range(rounds):
            for name, opt in optims.items():
                start = time.perf_counter()
                for _ in range(steps):
                    opt.zero_grad()
                    logits = model(inputs)
                    loss = nn.functional.cross_entropy(
                        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
                    )
                    loss.backward()
                    opt.step()
                times[name].append((time.perf_counter() - start) / steps)
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


def main(argv: list[str] | None = None) -> None:
    """Train every (task, optimizer, seed), time the steps, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    ratios = step_time_ratios(args.rounds, steps=10)
    runs = []
    for task in args.tasks:
        spec = TASKS[task]
        for name in BUILDERS:
            for seed in args.seeds:
                overrides = [*spec["overrides"], *optimizer_args(name, spec["sgd_lr"])]
                result = fit_and_test(spec["config"], overrides, seed, spec["metrics"])
                runs.append({"task": task, "optimizer": name, "seed": seed, **result})
                print(runs[-1], flush=True)
    text = markdown(runs, ratios)
    print(text)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "learning_rules_optimizer.md").write_text(text)
    record = {
        "runs": runs,
        "step_time_vs_adam": ratios,
        "tasks": {k: v["overrides"] for k, v in TASKS.items()},
    }
    (args.output_dir / "learning_rules_optimizer.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
