"""Helpers to run `train.py` in-process or as its own process from tests."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from optiforge.cli import OptiforgeCLI, main
from optiforge.forked_train import Children, run_ranks

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TRAIN_PY = PROJECT_ROOT / "train.py"
CONFIG_DIR = PROJECT_ROOT / "configs"
DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"
OUTPUTS = ("stdout.log", "stderr.log")  # where a forked train.py run writes its output


def config_args(*names: str) -> list[str]:
    """`--config` arguments of the stacked configs named like "testbeds/digits_cnn" (relative
    to configs/, no suffix), in order: e.g. "hephaestus/base", "hephaestus/refine",
    "hephaestus/linear"."""
    return [arg for name in names for arg in ("--config", str(CONFIG_DIR / f"{name}.yaml"))]


def run_cli(*args: str) -> OptiforgeCLI:
    """Run the CLI in this process (faster than a subprocess; W&B stays disabled)."""
    return main(list(args))


def run_train_py(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 600, ranks: int = 1
) -> subprocess.CompletedProcess[str]:
    """`python train.py ...` in `cwd` as its own process, forked from the warm server
    (`optiforge.forked_train`: the state of a fresh interpreter after `import optiforge.cli`,
    without paying that import again); its exit status, stdout and stderr. With `ranks` > 1,
    that many DDP ranks, all forked (`forked_train.ddp_environments`; the command gives the
    strategy and devices): the first failing rank's status, rank 0's output."""
    full_env = {**os.environ, "WANDB_MODE": "disabled", "PYTHONHASHSEED": "0", **(env or {})}
    command = [sys.executable, str(TRAIN_PY), *args]
    with tempfile.TemporaryDirectory(prefix="train-py-logs-") as folder:
        logs = Path(folder)
        statuses = run_ranks(Children(full_env), command, cwd, full_env, ranks, logs, timeout)
        stdout, stderr = ((logs / "rank0" / name).read_text(errors="replace") for name in OUTPUTS)
    status = next((code for code in statuses if code != 0), 0)
    return subprocess.CompletedProcess(command, status, stdout, stderr)


def written_files(directory: Path) -> list[str]:
    """Everything under `directory`, as sorted relative paths (to show that nothing was written)."""
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def metric_column(metrics_csv: Path, name: str) -> list[float]:
    """All non-empty values of column `name` in a CSVLogger metrics.csv, in row order."""
    with open(metrics_csv, newline="") as handle:
        return [float(row[name]) for row in csv.DictReader(handle) if row.get(name)]


def layered(*paths: Path) -> dict[str, Any]:
    """Config files merged key by key, later files winning (what stacked `--config`s give), as
    one dictionary a test can change and write out as a single file."""

    def merge(into: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
        for key, value in update.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = value
        return into

    merged: dict[str, Any] = {}
    for path in paths:
        merge(merged, yaml.safe_load(Path(path).read_text()) or {})
    return merged
