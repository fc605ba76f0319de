"""Stopping and resuming from last.ckpt reproduces an uninterrupted run exactly."""

from __future__ import annotations

from pathlib import Path

import torch

from tests.cli_helpers import DEFAULT_CONFIG, run_cli


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
