"""Helpers to run `train.py` in-process or as a subprocess from tests."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from optiforge.cli import OptiforgeCLI, main

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TRAIN_PY = PROJECT_ROOT / "train.py"
CONFIG_DIR = PROJECT_ROOT / "configs"
DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"


def config_args(*names: str) -> list[str]:
    """`--config` arguments of the stacked configs named like "testbeds/digits_cnn" (relative
    to configs/, no suffix), in order: e.g. "hephaestus/base", "hephaestus/refine",
    "hephaestus/linear"."""
    return [arg for name in names for arg in ("--config", str(CONFIG_DIR / f"{name}.yaml"))]


def run_cli(*args: str) -> OptiforgeCLI:
    """Run the CLI in this process (faster than a subprocess; W&B stays disabled)."""
    return main(list(args))


def run_train_py(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 600):
    """Run `python train.py ...` as a subprocess in `cwd`; returns the CompletedProcess."""
    full_env = {**os.environ, "WANDB_MODE": "disabled", "PYTHONHASHSEED": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, str(TRAIN_PY), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


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
