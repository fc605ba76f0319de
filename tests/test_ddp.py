"""Two DDP processes (gloo, CPU) follow the same RW-SAM loss trajectory as one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import DEFAULT_CONFIG, metric_column, run_cli, run_train_py

RWSAM = [
    "--optimizer",
    "optiforge.optimizers.RWSAM",
    "--optimizer.temperature",
    "0.1",
    "--optimizer.base_optimizer",
    "torch.optim.AdamW",
    "--optimizer.base_optimizer.lr",
    "0.003",
]


def train_losses(directory: Path, devices: int, batch_size: int) -> list[float]:
    """Per-step training losses of 12 RW-SAM steps of the default experiment: one device in this
    process, two as `python train.py` (Lightning's DDP launcher starts the second rank)."""
    args = [
        "fit",
        *("--config", str(DEFAULT_CONFIG), *RWSAM),
        *("--data.batch_size", str(batch_size), "--trainer.max_steps", "12"),
        *("--trainer.limit_val_batches", "0", "--trainer.log_every_n_steps", "1"),
        *("--trainer.enable_progress_bar", "false", "--test_after_fit", "false"),
        *("--trainer.logger", "lightning.pytorch.loggers.CSVLogger"),
        *("--trainer.logger.save_dir", str(directory)),
        *("--trainer.default_root_dir", str(directory)),
    ]
    if devices == 1:
        run_cli(*args)
    else:
        strategy = ("--trainer.devices", str(devices), "--trainer.strategy", "ddp")
        result = run_train_py(*args, *strategy, cwd=directory)
        assert result.returncode == 0, result.stderr[-3000:]
    metrics = next(directory.rglob("metrics.csv"))
    return metric_column(metrics, "train/loss_step")


@pytest.mark.slow
def test_rwsam_two_processes_match_one(tmp_path: Path) -> None:
    """Rank-strided shuffling, gradient averaging, RW-SAM's probe pass under DDP and its Gibbs
    weights normalized over both ranks make 2 x 32 take the steps of 1 x 64 (a wrong data split
    or an unaveraged gradient breaks the match as surely as a rank-local weight)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    single = train_losses(tmp_path / "one", devices=1, batch_size=64)
    double = train_losses(tmp_path / "two", devices=2, batch_size=32)
    assert len(single) == len(double) == 12
    assert single[0] > single[-1] + 0.05, "the trajectory must move for the comparison to mean much"
    for step, (a, b) in enumerate(zip(single, double, strict=True)):
        assert abs(a - b) < 1e-5, f"step {step}: 1 process {a} vs 2 processes {b}"
