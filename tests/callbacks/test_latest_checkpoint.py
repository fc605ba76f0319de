"""LatestCheckpoint: last.ckpt holds the latest state, not the last improvement."""

from __future__ import annotations

import warnings
from pathlib import Path

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.demos.boring_classes import BoringModel

from optiforge.callbacks import LatestCheckpoint


class WorseningModel(BoringModel):
    """Validation score = epoch index: with mode "min" only epoch 0 is an improvement."""

    def validation_step(self, batch: torch.Tensor, batch_idx: int) -> None:
        self.log("val/score", float(self.current_epoch))


def fit(tmp_path: Path, checkpoint: ModelCheckpoint, **trainer_args: object) -> L.Trainer:
    trainer = L.Trainer(
        default_root_dir=tmp_path,
        callbacks=[checkpoint],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_train_batches=4,
        limit_val_batches=1,
        **trainer_args,
    )
    trainer.fit(WorseningModel())
    return trainer


def saved_step(path: Path) -> int:
    return torch.load(path, weights_only=False)["global_step"]


@pytest.mark.parametrize("trainer_args", [{"max_epochs": 3}, {"max_epochs": 5, "max_steps": 10}])
def test_last_checkpoint_is_the_final_state(tmp_path: Path, trainer_args: dict) -> None:
    """After 3 non-improving-after-the-first epochs, or a stop at step 10 in the middle of
    epoch 2, last.ckpt holds the final step; Lightning's own ModelCheckpoint keeps step 4."""
    ours = LatestCheckpoint(dirpath=tmp_path / "ours", monitor="val/score", save_last=True)
    trainer = fit(tmp_path, ours, **trainer_args)
    assert saved_step(tmp_path / "ours" / "last.ckpt") == trainer.global_step
    assert saved_step(Path(ours.best_model_path)) == 4  # the best is still epoch 0's
    plain = ModelCheckpoint(dirpath=tmp_path / "plain", monitor="val/score", save_last=True)
    fit(tmp_path, plain, **trainer_args)
    assert saved_step(tmp_path / "plain" / "last.ckpt") == 4  # the bug this class fixes


def test_resuming_into_its_own_folder_does_not_warn(tmp_path: Path) -> None:
    """A fit resumed from last.ckpt in its folder gives no "not empty" warning; a new fit into
    the same non-empty folder still does."""
    folder = tmp_path / "ckpt"
    fit(tmp_path, LatestCheckpoint(dirpath=folder, save_last=True), max_epochs=1)
    with warnings.catch_warnings(record=True) as resumed:
        warnings.simplefilter("always")
        trainer = L.Trainer(
            default_root_dir=tmp_path,
            callbacks=[LatestCheckpoint(dirpath=folder, save_last=True)],
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            limit_train_batches=4,
            limit_val_batches=1,
            max_epochs=2,
        )
        trainer.fit(WorseningModel(), ckpt_path=folder / "last.ckpt")
    assert trainer.global_step == 8
    assert not any("not empty" in str(w.message) for w in resumed)
    with pytest.warns(UserWarning, match="not empty"):
        fit(tmp_path, LatestCheckpoint(dirpath=folder, save_last=True), max_epochs=1)
