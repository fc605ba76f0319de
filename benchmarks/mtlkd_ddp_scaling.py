"""MTL-KD training on both cores: instances per second of 1 process against 2-process DDP.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run mtlkd_ddp_scaling [--model student]
        [--short-steps 5] [--long-steps 25]

After one warm-up fit (it solves the evaluation references), each setting is `python train.py
fit` (configs/mtlkd/base.yaml + `--model`'s overlay, one thread per process, no validation, no
logger) run for `--short-steps` and for `--long-steps` optimizer steps; the difference of the
two wall times is the time of the extra steps without start-up (imports, teachers). With 2
processes (`--trainer.devices 2 --trainer.strategy ddp`, gloo; both ranks forked from one warm
server, as `torchrun` starts them) a step trains on one batch per rank, so on 2 x batch
instances.
The settings alternate, 1 process first, so that load on a shared machine hits both alike.
Writes mtlkd_ddp_scaling_<model>.{json,md}.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.benchmarks.harness.record import ROOT
from optiforge.forked_train import TRAIN_PY, Children, run_ranks

OVERLAYS = {"student": "student.yaml", "teacher": "teacher_cvrp.yaml"}
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "PYTHONHASHSEED": "0"}


@dataclass(frozen=True)
class Config:
    """The model trained, the two run lengths and the training batch."""

    model: Literal["student", "teacher"] = "student"
    short_steps: int = 5
    long_steps: int = 25
    batch_size: int | None = None  # None: the config's (student 60, teacher 64)
    num_customers: int = 50

    def __post_init__(self) -> None:
        if not self.short_steps < self.long_steps:
            raise ValueError(
                f"--long-steps: must be > --short-steps ({self.short_steps}), got {self.long_steps}"
            )


def fit_seconds(args: Config, devices: int, steps: int, folder: Path, children: Children) -> float:
    """Wall seconds of one `train.py fit` of `steps` steps on `devices` processes, every rank
    forked from the warm server (`forked_train.ddp_environments`)."""
    command = [
        sys.executable, str(TRAIN_PY), "fit",
        "--config", str(ROOT / "configs/mtlkd/base.yaml"),
        "--config", str(ROOT / "configs/mtlkd" / OVERLAYS[args.model]),
        "--data.init_args.num_customers", str(args.num_customers),
        "--data.init_args.cache_dir", str(folder / "vrp"),
        "--trainer.max_steps", str(steps), "--trainer.limit_val_batches", "0",
        "--trainer.logger", "false", "--trainer.callbacks", "[]",
        "--trainer.enable_progress_bar", "false", "--test_after_fit", "false",
        "--checkpoint.dirpath", str(folder / f"ckpt-{devices}-{steps}"),
        "--trainer.devices", str(devices),
        *(["--trainer.strategy", "ddp"] if devices > 1 else []),
        *(["--data.init_args.batch_size", str(args.batch_size)] if args.batch_size else []),
    ]  # fmt: skip
    start = time.perf_counter()
    statuses = run_ranks(children, command, folder, ENV, devices, folder)
    seconds = time.perf_counter() - start
    for rank, status in enumerate(statuses):
        if status != 0:
            log = (folder / f"rank{rank}" / "stderr.log").read_text(errors="replace")
            error = log.strip().splitlines()
            raise RuntimeError(f"train.py fit on {devices} process(es) failed: {error[-1:]}")
    return seconds


def main(run: Run, args: Config) -> None:
    batch = args.batch_size or {"student": 60, "teacher": 64}[args.model]
    seconds: dict[int, dict[int, float]] = {1: {}, 2: {}}
    children = Children(ENV)
    with tempfile.TemporaryDirectory(prefix="mtlkd-ddp-") as scratch:
        fit_seconds(args, 1, 1, Path(scratch), children)  # warm-up: solves the eval references
        for steps in (args.short_steps, args.long_steps):
            for devices in (1, 2):
                seconds[devices][steps] = fit_seconds(args, devices, steps, Path(scratch), children)
    extra = args.long_steps - args.short_steps
    rows = []
    for devices, times in seconds.items():
        step = (times[args.long_steps] - times[args.short_steps]) / extra
        rows.append({"processes": devices, "seconds_per_step": step,
                     "instances_per_s": devices * batch / step, "wall": times})  # fmt: skip
    ratio = rows[1]["instances_per_s"] / rows[0]["instances_per_s"]
    columns = [
        Column("processes", "processes"),
        Column("s / step", "seconds_per_step", ".3f"),
        Column("instances / s", "instances_per_s", ".1f"),
    ]
    text = (
        f"# MTL-KD {args.model} on both cores (n = {args.num_customers}, batch {batch} per "
        f"process, one thread each)\n\n{markdown_table(rows, columns)}\n\n"
        f"2 processes / 1 process: {ratio:.2f}x instances per second "
        f"(steps {args.short_steps} -> {args.long_steps}, start-up excluded)\n"
    )
    payload = {"model": args.model, "batch": batch, "rows": rows, "ratio": ratio}
    run.write(f"mtlkd_ddp_scaling_{args.model}", payload, text)


BENCHMARK = Benchmark(
    "mtlkd_ddp_scaling",
    main,
    Config,
    smoke=dict(model="teacher", short_steps=1, long_steps=2, batch_size=4, num_customers=10),
)

if __name__ == "__main__":
    BENCHMARK.main()
