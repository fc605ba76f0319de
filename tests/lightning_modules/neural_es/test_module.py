"""The Neural-ES LightningModule: budget respected, seeded reruns and resumes identical, checks."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint

from optiforge.datamodules.preferences import PreferenceDataModule
from optiforge.lightning_modules.neural_es import NeuralES


def fit(
    seed: int,
    max_evaluations: int,
    max_epochs: int = 50,
    directory: Path | None = None,
    resume: Path | None = None,
) -> NeuralES:
    """A small Neural-ES fit on psl5 (3 objectives, D = 8) until the budget or `max_epochs`
    stops it; with `directory`, last.ckpt is written there."""
    L.seed_everything(seed)
    module = NeuralES(
        "psl5",
        dim=8,
        num_blocks=4,
        hidden_sizes=(16, 16),
        max_evaluations=max_evaluations,
        seed=seed,
    )
    data = PreferenceDataModule(num_obj=3, preferences_per_step=4, steps_per_epoch=10, seed=seed)
    callbacks = [] if directory is None else [ModelCheckpoint(dirpath=directory, save_last=True)]
    trainer = L.Trainer(
        max_epochs=max_epochs,
        logger=False,
        enable_checkpointing=directory is not None,
        callbacks=callbacks,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        check_val_every_n_epoch=2,
    )
    trainer.fit(module, data, ckpt_path=resume)
    return module


def test_budget_stops_training_and_reruns_reproduce_the_archive() -> None:
    """4 preferences x 5 samples per step: 460 evaluations fit 23 steps and no more; a seeded
    rerun gives the same archive."""
    first, second = fit(0, 460), fit(0, 460)
    assert first.samples == 5 and first.budget.used == 460
    assert torch.equal(first.budget.archive.f, second.budget.archive.f)
    assert torch.equal(first.budget.archive.x, second.budget.archive.x)


def test_resuming_from_a_checkpoint_continues_the_same_run(tmp_path: Path) -> None:
    """Stopping after one epoch and resuming from last.ckpt ends with the uninterrupted run's
    archive, evaluation count and weights."""
    whole = fit(1, 400)
    fit(1, 400, max_epochs=1, directory=tmp_path)
    resumed = fit(1, 400, directory=tmp_path, resume=tmp_path / "last.ckpt")
    assert resumed.budget.used == whole.budget.used == 400
    assert torch.equal(resumed.budget.archive.f, whole.budget.archive.f)
    for a, b in zip(resumed.parameters(), whole.parameters(), strict=True):
        assert torch.equal(a, b)


def test_mismatched_preferences_and_bad_options_are_refused() -> None:
    """A two-objective batch for a three-objective problem, a bad scalarisation or sample
    count raise ValueError naming what to change."""
    module = NeuralES("psl5", dim=8, num_blocks=4, hidden_sizes=(8,))
    with pytest.raises(ValueError, match="set the data's num_obj to 3"):
        module.validation_step(torch.full((2, 2), 0.5), 0)
    with pytest.raises(ValueError, match="scalarization must be one of"):
        NeuralES(scalarization="sum")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ideal must be one of"):
        NeuralES(ideal="nadir")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="samples_per_preference"):
        NeuralES(samples_per_preference=1)
