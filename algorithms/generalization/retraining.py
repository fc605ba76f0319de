"""Independent retrainings through `train.py`, each on its own resampled training set, and the
training and test losses read back from their CSV logs.

Retraining k runs `python train.py fit --config ...` in a child process with
`--seed_everything s_k --data.init_args.train_resample_seed s_k` (s_k = seed + k), a CSVLogger
in its own folder instead of W&B (nothing touches the network), and, when a collection of
distributions is given, the k-th value of that collection (cycling, so that each value is used
equally often: the uniform prior of the paper's setting). Up to `workers` run at once.

The children are forked from one warm server process that imported the CLI once
(`optiforge.forked_train`): each child runs `train.py`'s `main` on that command line, in its
own folder, with its stdout and stderr in `stdout.log` / `stderr.log` there. A fresh interpreter
per retraining would pay the import of Lightning (about 10 s on a 2-core CPU) every time.

`run_retrainings` reports each start (with the child's pid) and each finished retraining to a
`progress` callback. If it is interrupted (Ctrl-C: KeyboardInterrupt in the calling thread) or
one retraining fails, the queued retrainings are cancelled and the running children are
stopped: SIGINT, then SIGKILL after 2 s (`forked_train.STOP_GRACE_SECONDS`), so that nothing
keeps training after the call returns.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from optiforge.forked_train import TRAIN_PY, Children, run_train_py

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


class Progress:
    """What `run_retrainings` reports; the default prints nothing."""

    def started(self, index: int, seed: int, pid: int) -> None:
        """Retraining `index` (seed `seed`) started as process `pid`."""

    def finished(self, run: Retraining, done: int, total: int) -> None:
        """`run` finished; `done` of `total` retrainings have finished."""


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


def child_environment() -> dict[str, str]:
    """This process's environment, offline, with a fixed hash seed and (unless set) one thread
    per run, so that parallel runs do not oversubscribe the cores."""
    env = {**os.environ, "WANDB_MODE": "disabled", "PYTHONHASHSEED": "0"}
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_one(
    configs: Sequence[Path],
    index: int,
    seed: int,
    runs_dir: Path,
    distributions: Distributions | None,
    metric: str,
    kind: MetricKind,
    children: Children | None = None,
    progress: Progress | None = None,
) -> Retraining:
    """Train once through `train.py` and read back the final training and test losses."""
    children = Children(child_environment()) if children is None else children
    run_dir = runs_dir / f"retraining-{index:03d}"
    run_dir.mkdir(parents=True, exist_ok=True)
    extra = distributions.arguments(index) if distributions else []
    start = time.perf_counter()
    command = retraining_command(configs, seed, run_dir, extra)
    process = children.start(run_train_py, command, run_dir, child_environment())
    assert process.pid is not None
    if progress is not None:
        progress.started(index, seed, process.pid)
    status = children.wait(process)
    seconds = time.perf_counter() - start
    if status != 0:
        lines = (run_dir / "stderr.log").read_text(errors="replace").strip().splitlines()
        raise RuntimeError(
            f"retraining {index} (seed {seed}) failed: {(lines or ['(no output)'])[-1]}"
        )
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
    progress: Progress | None = None,
) -> list[Retraining]:
    """`retrainings` independent runs, up to `workers` at a time, in index order; on an
    interrupt or a failed run, the others are cancelled or stopped before the error goes on."""
    progress = Progress() if progress is None else progress
    children = Children(child_environment())
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [
            pool.submit(
                run_one,
                configs,
                index,
                seed + index,
                runs_dir,
                distributions,
                metric,
                kind,
                children,
                progress,
            )  # fmt: skip
            for index in range(retrainings)
        ]
        runs = []
        for future in as_completed(futures):
            runs.append(future.result())
            progress.finished(runs[-1], len(runs), retrainings)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        children.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)
    return sorted(runs, key=lambda run: run.index)
