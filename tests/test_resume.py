"""Stopping and resuming from last.ckpt reproduces an uninterrupted run exactly, and continues
the same W&B run."""

from __future__ import annotations

from pathlib import Path

import torch

from tests.cli_helpers import DEFAULT_CONFIG, config_args, run_cli, run_train_py
from tests.wandb_offline_reader import history_values, read_records


def train(directory: Path, *extra: str) -> dict[str, torch.Tensor]:
    """Fit the default experiment with checkpoints in `directory`; returns last.ckpt's weights."""
    run_cli(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--trainer.logger",
        "false",
        "--trainer.enable_progress_bar",
        "false",
        "--test_after_fit",
        "false",
        "--checkpoint.dirpath",
        str(directory),
        *extra,
    )
    return torch.load(directory / "last.ckpt", weights_only=False)["state_dict"]


def test_resume_matches_uninterrupted(in_tmp_dir: Path) -> None:
    """4 epochs in one go equal a run stopped at an epoch boundary and resumed."""
    full = train(in_tmp_dir / "full", "--trainer.max_epochs=4")
    stopped = train(in_tmp_dir / "parts", "--trainer.max_epochs=2")
    resumed = train(
        in_tmp_dir / "parts",
        "--trainer.max_epochs=4",
        "--ckpt_path",
        str(in_tmp_dir / "parts" / "last.ckpt"),
    )
    assert full.keys() == resumed.keys()
    assert not all(torch.allclose(full[n], stopped[n], atol=1e-6) for n in full), "no progress"
    for name in full:
        assert torch.allclose(full[name], resumed[name], atol=1e-6, rtol=0), name


def test_a_mid_epoch_stop_leaves_its_final_state_in_last_ckpt(in_tmp_dir: Path) -> None:
    """Stopped at step 30 (mid-epoch, 20-step epochs), last.ckpt is step 30's state, not the
    last validation improvement (Lightning's own save_last)."""
    train(in_tmp_dir / "parts", "--trainer.max_steps=30")
    checkpoint = torch.load(in_tmp_dir / "parts" / "last.ckpt", weights_only=False)
    assert checkpoint["global_step"] == 30


def test_resume_continues_the_wandb_run_and_its_checkpoint_folder(tmp_path: Path) -> None:
    """Offline W&B: a fit whose run id is given (`--trainer.logger.init_args.id`) and its resume
    from last.ckpt without an id log into one run id, the second part's epochs and steps follow
    the first's, and both parts save into optiforge/<run id>/checkpoints."""
    common = [
        *config_args("default"),
        *("--trainer.limit_train_batches", "2", "--trainer.limit_val_batches", "1"),
        *("--trainer.log_every_n_steps", "1", "--test_after_fit", "false"),
        *("--trainer.enable_progress_bar", "false", "--trainer.enable_model_summary", "false"),
    ]
    offline = {"WANDB_MODE": "offline"}
    first = run_train_py(
        "fit",
        *common,
        "--trainer.max_epochs",
        "1",
        "--trainer.logger.init_args.id",
        "run1",
        cwd=tmp_path,
        env=offline,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    last = tmp_path / "optiforge" / "run1" / "checkpoints" / "last.ckpt"
    second = run_train_py(
        "fit",
        *common,
        "--trainer.max_epochs",
        "2",
        "--ckpt_path",
        str(last),
        cwd=tmp_path,
        env=offline,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert "exists and is not empty" not in second.stderr  # its own folder, as expected
    runs = sorted((tmp_path / "wandb").glob("offline-run-*"))  # named by start time
    assert len(runs) == 2
    records = [read_records(next(run.glob("run-*.wandb"))) for run in runs]
    run_ids = {
        r.run.run_id for part in records for r in part if r.WhichOneof("record_type") == "run"
    }
    assert run_ids == {"run1"}
    first_steps, second_steps = (history_values(part, "trainer/global_step") for part in records)
    assert first_steps and second_steps == [step + 2 for step in first_steps]
    assert set(history_values(records[0], "epoch")) == {0.0}
    assert set(history_values(records[1], "epoch")) == {1.0}
    assert [p.name for p in (tmp_path / "optiforge").iterdir()] == ["run1"]
    assert torch.load(last, weights_only=False)["epoch"] == 1  # the second part's last state
