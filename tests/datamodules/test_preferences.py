"""The preference DataModule: simplex batches, fresh and reproducible per epoch, the lattice."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.datamodules.preferences import PreferenceDataModule


def test_batches_lie_on_the_simplex_and_reproduce() -> None:
    """Each pass yields `steps` batches [K, M] on the simplex; passes differ from each other and
    equal those of a module with the same seed."""
    first = PreferenceDataModule(num_obj=3, preferences_per_step=5, steps_per_epoch=4, seed=7)
    second = PreferenceDataModule(num_obj=3, preferences_per_step=5, steps_per_epoch=4, seed=7)
    epoch0, epoch1 = list(first.train_dataloader()), list(first.train_dataloader())
    assert len(epoch0) == 4 and epoch0[0].shape == (5, 3)
    for batch in epoch0:
        assert (batch >= 0).all() and torch.allclose(batch.sum(1), torch.ones(5))
    assert not torch.equal(epoch0[0], epoch1[0])
    assert all(
        torch.equal(a, b) for a, b in zip(epoch0, list(second.train_dataloader()), strict=True)
    )


def test_state_dict_continues_the_draws() -> None:
    """A module restored from another's state draws that module's next pass."""
    first = PreferenceDataModule(preferences_per_step=3, steps_per_epoch=2, seed=1)
    list(first.train_dataloader())
    resumed = PreferenceDataModule(preferences_per_step=3, steps_per_epoch=2, seed=1)
    resumed.load_state_dict(first.state_dict())
    expected, actual = list(first.train_dataloader()), list(resumed.train_dataloader())
    assert all(torch.equal(a, b) for a, b in zip(expected, actual, strict=True))


def test_validation_is_one_lattice_batch() -> None:
    """Validation is the largest simplex lattice within eval_preferences points."""
    data = PreferenceDataModule(num_obj=3, eval_preferences=100)
    (batch,) = list(data.val_dataloader())
    assert batch.shape == (math.comb(14, 2), 3)


def test_bad_arguments_are_refused() -> None:
    """Fewer than two objectives or non-positive counts raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="num_obj must be >= 2"):
        PreferenceDataModule(num_obj=1)
    with pytest.raises(ValueError, match="preferences_per_step must be >= 1"):
        PreferenceDataModule(preferences_per_step=0)
