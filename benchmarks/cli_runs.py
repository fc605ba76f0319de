"""Shared by the benchmark scripts: one `train.py fit` (+ test) run in process, seeded."""

from __future__ import annotations

import time
from pathlib import Path

from optiforge.cli import OptiforgeCLI
from optiforge.cli import main as train_main


def fit(config: Path, overrides: list[str], seed: int) -> tuple[OptiforgeCLI, float]:
    """Fit `config` with `overrides` at `seed` (model init and data) and test as `train.py fit`
    does, without a logger; returns the finished CLI and its wall seconds."""
    start = time.perf_counter()
    cli = train_main(
        [
            "fit",
            "--config",
            str(config),
            "--seed_everything",
            str(seed),
            "--data.seed",
            str(seed),
            "--trainer.logger",
            "false",
            "--trainer.enable_progress_bar",
            "false",
            "--trainer.enable_model_summary",
            "false",
            *overrides,
        ]
    )
    return cli, time.perf_counter() - start


def fit_and_test(
    config: Path, overrides: list[str], seed: int, metrics: tuple[str, ...]
) -> dict[str, float]:
    """Fit `config` with `overrides` at `seed` (model init and data) and test as `fit` does;
    returns the requested `test/<name>` metrics and the wall seconds, without a logger."""
    cli, seconds = fit(config, overrides, seed)
    results = {name: float(cli.trainer.callback_metrics[f"test/{name}"]) for name in metrics}
    return {**results, "seconds": seconds}
