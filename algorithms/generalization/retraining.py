"""Independent retrainings through `train.py`, each on its own resampled training set, and the
training and test losses read back from their CSV logs.

Retraining k runs `python train.py fit --config ...` as a subprocess with
`--seed_everything s_k --data.init_args.train_resample_seed s_k` (s_k = seed + k), a CSVLogger
in its own folder instead of W&B (nothing touches the network), and, when a collection of
distributions is given, the k-th value of that collection (cycling, so that each value is used
equally often: the uniform prior of the paper's setting). Up to `workers` run at once.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

TRAIN_PY = Path(__file__).resolve().parents[2] / "train.py"
MetricKind = Literal["accuracy", "loss"]


@dataclass(frozen=True)
class Distributions:
    """A collection of data distributions as values of one config option, e.g.
    `data.init_args.label_noise` in (0.0, 0.1, 0.2, 0.3)."""

    option: str
    values: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Distributions:
        """`OPTION=V1,V2,...` (the option as `train.py` spells it, without leading dashes)."""
        option, sep, values = text.partition("=")
        parts = tuple(value.strip() for value in values.split(","))
        if not sep or not option.strip() or not all(parts):
            raise ValueError(f"distributions: expected OPTION=V1,V2,..., got {text!r}")
        return cls(option.strip().removeprefix("--"), parts)

    def arguments(self, index: int) -> list[str]:
        """The command-line override of retraining `index`."""
        return [f"--{self.option}", self.values[index % len(self.values)]]


@dataclass(frozen=True)
class Retraining:
    """One finished retraining: its seed, its distribution value, and its two losses."""

    index: int
    seed: int
    distribution: str | None
    train_loss: float
    test_loss: float
    seconds: float


def retraining_command(
    configs: Sequence[Path], seed: int, run_dir: Path, extra: Sequence[str] = ()
) -> list[str]:
    """The `train.py` command line of one retraining logging to `run_dir/metrics.csv`."""
    config_args = [arg for path in configs for arg in ("--config", str(Path(path).resolve()))]
    return [
        sys.executable,
        str(TRAIN_PY),
        "fit",
        *config_args,
        *("--seed_everything", str(seed), "--data.init_args.train_resample_seed", str(seed)),
        *("--trainer.logger", "lightning.pytorch.loggers.CSVLogger"),
        *("--trainer.logger.save_dir", str(run_dir), "--trainer.logger.name", ""),
        *("--trainer.logger.version", "", "--trainer.enable_progress_bar", "false"),
        *("--checkpoint.dirpath", str(run_dir / "checkpoints")),
        *extra,
    ]


def last_logged(metrics_csv: Path, names: Sequence[str]) -> float:
    """Last non-empty value of the first of `names` that the run logged."""
    with open(metrics_csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for name in names:
        values = [row[name] for row in rows if row.get(name)]
        if values:
            return float(values[-1])
    raise ValueError(f"metric: the run logged none of {', '.join(names)} ({metrics_csv})")


def logged_loss(metrics_csv: Path, split: str, metric: str, kind: MetricKind) -> float:
    """The run's `split/metric` (or `split/metric_epoch`) as a loss: 1 - value for accuracy."""
    value = last_logged(metrics_csv, (f"{split}/{metric}", f"{split}/{metric}_epoch"))
    return 1.0 - value if kind == "accuracy" else value


def run_one(
    configs: Sequence[Path],
    index: int,
    seed: int,
    runs_dir: Path,
    distributions: Distributions | None,
    metric: str,
    kind: MetricKind,
) -> Retraining:
    """Train once through `train.py` and read back the final training and test losses."""
    run_dir = runs_dir / f"retraining-{index:03d}"
    run_dir.mkdir(parents=True, exist_ok=True)
    extra = distributions.arguments(index) if distributions else []
    env = {**os.environ, "WANDB_MODE": "disabled", "PYTHONHASHSEED": "0"}
    env.setdefault("OMP_NUM_THREADS", "1")  # parallel runs must not oversubscribe the cores
    start = time.perf_counter()
    result = subprocess.run(
        retraining_command(configs, seed, run_dir, extra),
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"retraining {index} (seed {seed}) failed: {last}")
    metrics_csv = run_dir / "metrics.csv"
    return Retraining(
        index=index,
        seed=seed,
        distribution=extra[1] if extra else None,
        train_loss=logged_loss(metrics_csv, "train", metric, kind),
        test_loss=logged_loss(metrics_csv, "test", metric, kind),
        seconds=seconds,
    )


def run_retrainings(
    configs: Sequence[Path],
    retrainings: int,
    runs_dir: Path,
    *,
    workers: int = 1,
    seed: int = 0,
    distributions: Distributions | None = None,
    metric: str = "acc",
    kind: MetricKind = "accuracy",
) -> list[Retraining]:
    """`retrainings` independent runs, up to `workers` at a time, in index order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(
                run_one, configs, index, seed + index, runs_dir, distributions, metric, kind
            )
            for index in range(retrainings)
        ]
        return [future.result() for future in futures]
