"""The Neural-ES LightningModule: budget respected, seeded reruns identical, input checks."""

from __future__ import annotations

import lightning as L
import pytest
import torch

from datamodules.preferences import PreferenceDataModule
from lightning_modules.neural_es import NeuralES


def fit(seed: int, max_evaluations: int) -> NeuralES:
    """A small Neural-ES fit on psl5 (3 objectives, D = 8) until the budget stops it."""
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
    trainer = L.Trainer(
        max_epochs=50,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        check_val_every_n_epoch=2,
    )
    trainer.fit(module, data)
    return module


def test_budget_stops_training_and_reruns_reproduce_the_archive() -> None:
    """4 preferences x 5 samples per step: 460 evaluations fit 23 steps and no more; a seeded
    rerun gives the same archive."""
    first, second = fit(0, 460), fit(0, 460)
    assert first.samples == 5 and first.budget.used == 460
    assert torch.equal(first.budget.archive.f, second.budget.archive.f)
    assert torch.equal(first.budget.archive.x, second.budget.archive.x)


def test_mismatched_preferences_and_bad_options_are_refused() -> None:
    """A two-objective batch for a three-objective problem, a bad scalarisation or sample
    count raise ValueError naming what to change."""
    module = NeuralES("psl5", dim=8, num_blocks=4, hidden_sizes=(8,))
    with pytest.raises(ValueError, match="set the data's num_obj to 3"):
        module.validation_step(torch.full((2, 2), 0.5), 0)
    with pytest.raises(ValueError, match="scalarization must be one of"):
        NeuralES(scalarization="sum")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="samples_per_preference"):
        NeuralES(samples_per_preference=1)
