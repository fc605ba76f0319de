"""DigitsInterpolationDataModule: full-batch serving, the seeded constrained subset, refusals."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from optiforge.datamodules.digits_interpolation import DigitsInterpolationDataModule

TRAIN_SIZE = 1797 - 2 * 270  # digits minus the 15 % validation and 15 % test splits


def test_batches_are_the_whole_training_split_with_the_mask() -> None:
    """Each batch is the whole training split with the same mask of 40 constrained rows."""
    data = DigitsInterpolationDataModule(constrained_samples=40, steps_per_epoch=3)
    data.setup("fit")
    batches = list(data.train_dataloader())
    assert len(batches) == 3
    x_train, y_train = data.splits["train"].tensors
    for x, y, constrained in batches:
        assert x.shape == (TRAIN_SIZE, 1, 8, 8)
        assert torch.equal(x, x_train) and torch.equal(y, y_train)
        assert constrained.dtype == torch.bool and int(constrained.sum()) == 40
        assert torch.equal(constrained, batches[0][2])


def test_constrained_split_is_the_masked_rows_in_batch_order() -> None:
    """constrained_split() returns exactly the masked training rows, in batch order."""
    data = DigitsInterpolationDataModule(constrained_samples=25)
    data.setup("fit")
    x, y = data.constrained_split()
    x_train, y_train = data.splits["train"].tensors
    index = data.constrained_mask.nonzero().squeeze(1)
    assert len(index) == 25
    assert torch.equal(x, x_train[index]) and torch.equal(y, y_train[index])


def test_subset_is_seeded_and_reproducible() -> None:
    """The constrained subset repeats for a seed and barely overlaps for another seed."""
    masks = []
    for seed in (0, 0, 1):
        data = DigitsInterpolationDataModule(constrained_samples=50, seed=seed)
        data.setup("fit")
        masks.append(data.constrained_mask)
    assert torch.equal(masks[0], masks[1])
    assert not torch.equal(masks[0], masks[2])
    assert int((masks[0] & masks[2]).sum()) < 25  # two draws of 50 of 1257 barely overlap


def test_all_training_samples_can_be_constrained() -> None:
    """constrained_samples equal to the training size constrains every sample."""
    data = DigitsInterpolationDataModule(constrained_samples=TRAIN_SIZE)
    data.setup("fit")
    assert bool(data.constrained_mask.all())


def test_label_noise_reaches_the_constrained_samples() -> None:
    """label_noise=0.5 keeps the mask and flips about half the constrained labels."""
    clean = DigitsInterpolationDataModule(constrained_samples=200)
    noisy = DigitsInterpolationDataModule(constrained_samples=200, label_noise=0.5)
    clean.setup("fit")
    noisy.setup("fit")
    assert torch.equal(clean.constrained_mask, noisy.constrained_mask)
    flipped = (clean.constrained_split()[1] != noisy.constrained_split()[1]).float().mean()
    assert 0.35 < float(flipped) < 0.65


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"constrained_samples": 0}, "data.constrained_samples must be >= 1, got 0"),
        ({"steps_per_epoch": 0}, "data.steps_per_epoch must be >= 1, got 0"),
        ({"label_noise": 1.0}, "data.label_noise must be in"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Zero samples or steps, or label_noise=1, raise a ValueError naming the field."""
    with pytest.raises(ValueError, match=message):
        DigitsInterpolationDataModule(**kwargs)


def test_more_constrained_samples_than_training_samples_fail() -> None:
    """More constrained samples than training rows fail at setup, naming the limit."""
    data = DigitsInterpolationDataModule(constrained_samples=TRAIN_SIZE + 1)
    with pytest.raises(ValueError, match=f"data.constrained_samples must be <= the {TRAIN_SIZE}"):
        data.setup("fit")


def test_more_than_one_process_is_refused() -> None:
    """setup and train_dataloader refuse world_size=2: the constraints need one process."""
    data = DigitsInterpolationDataModule()
    data.setup("fit")
    data.trainer = SimpleNamespace(world_size=2, global_rank=0)
    for call in (data.setup, data.train_dataloader):
        with pytest.raises(ValueError, match="constraints need one process.*world_size=2"):
            call()
