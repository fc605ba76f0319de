"""MTL-KD on two CPU processes (DDP, gloo): the student trains in lockstep on both ranks and
the validation it logs equals one process validating the same weights."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.cli_helpers import config_args, metric_column, run_cli, run_train_py

SMALL = [
    *("--data.init_args.num_customers", "10", "--data.init_args.batch_size", "12"),
    *("--data.init_args.batches_per_epoch", "2", "--data.init_args.val_instances", "2"),
    *("--data.init_args.reference_iterations", "10", "--trainer.callbacks", "[]"),
    *("--data.init_args.eval_variants", "[CVRP, VRPTW, OVRPB]"),
    *("--trainer.enable_progress_bar", "false", "--seed_everything", "3"),
]


@pytest.mark.slow
def test_student_on_two_processes_validates_as_one_process(tmp_path: Path) -> None:
    """`--trainer.devices 2 --trainer.strategy ddp` (both ranks forked, as torchrun starts them;
    tests/test_ddp.py runs Lightning's own launcher): one epoch of 2 steps per rank, one
    checkpoint at step 2, and the val/gap logged under DDP (every rank evaluates the whole
    val set, the ranks' means averaged) equals `validate` of that checkpoint in one process."""
    configs = config_args("mtlkd/base", "mtlkd/student")
    data = [*SMALL, "--data.init_args.cache_dir", str(tmp_path / "vrp")]
    result = run_train_py(
        "fit", *configs, *data,
        *("--trainer.devices", "2", "--trainer.strategy", "ddp", "--trainer.max_epochs", "1"),
        *("--trainer.logger", "lightning.pytorch.loggers.CSVLogger"),
        *("--trainer.logger.save_dir", str(tmp_path)), "--test_after_fit", "false",
        *("--checkpoint.dirpath", str(tmp_path / "ckpt")),
        cwd=tmp_path, ranks=2,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    checkpoint = tmp_path / "ckpt" / "last.ckpt"
    assert torch.load(checkpoint, weights_only=False)["global_step"] == 2
    logged = metric_column(next(tmp_path.rglob("metrics.csv")), "val/gap")
    assert len(logged) == 1
    cli = run_cli(
        "validate", *configs, *data, "--trainer.logger", "false",
        "--ckpt_path", str(checkpoint),
    )  # fmt: skip
    assert float(cli.trainer.callback_metrics["val/gap"]) == pytest.approx(logged[0], abs=1e-4)
