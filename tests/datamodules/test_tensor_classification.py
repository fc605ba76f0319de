"""Splits, label noise and rank-strided shuffling of the in-memory classification data."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.data import DistributedSampler

from optiforge.datamodules import DigitsDataModule


def prepared(**kwargs: float) -> DigitsDataModule:
    data = DigitsDataModule(**kwargs)
    data.setup("fit")
    return data


def test_splits_are_disjoint_and_cover_the_data() -> None:
    """70/15/15 of 1797 digits: sizes as rounded, and no image appears in two splits."""
    data = prepared()
    sizes = {name: len(split) for name, split in data.splits.items()}
    assert sizes == {"val": 270, "test": 270, "train": 1257}
    images, labels = data.load_arrays()
    rows = map(tuple, images.reshape(1797, -1).tolist())
    original = sorted(zip(rows, labels.tolist(), strict=True))
    together = sorted(
        (tuple(x.flatten().tolist()), int(y)) for split in data.splits.values() for x, y in split
    )
    assert together == original


def test_label_noise_changes_exactly_the_requested_share() -> None:
    """30 % noise flips round(0.3 * 1257) training labels, each to a different class."""
    clean, noisy = prepared(), prepared(label_noise=0.3)
    x_clean, y_clean = clean.splits["train"].tensors
    x_noisy, y_noisy = noisy.splits["train"].tensors
    assert torch.equal(x_clean, x_noisy)
    assert int((y_clean != y_noisy).sum()) == round(0.3 * 1257)
    assert torch.equal(clean.splits["test"].tensors[1], noisy.splits["test"].tensors[1])


def test_same_seed_same_split_other_seed_other_split() -> None:
    """The split is a function of the seed only."""
    a, b, c = prepared(seed=3), prepared(seed=3), prepared(seed=4)
    assert torch.equal(a.splits["test"].tensors[0], b.splits["test"].tensors[0])
    assert not torch.equal(a.splits["test"].tensors[0], c.splits["test"].tensors[0])


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(16, 300),
    world=st.integers(2, 4),
    batch=st.integers(1, 8),
    epoch=st.integers(0, 5),
)
def test_rank_batches_union_is_the_single_process_batch(
    n: int, world: int, batch: int, epoch: int
) -> None:
    """Batch k of every rank (size b) together is batch k of one process (size world * b)."""
    dataset = list(range(n))
    single = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True, seed=7)
    single.set_epoch(epoch)
    order = list(single)
    ranks = []
    for rank in range(world):
        sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=7)
        sampler.set_epoch(epoch)
        ranks.append(list(sampler))
    full_batches = (n // world) // batch
    for k in range(full_batches):
        union = sorted(i for r in ranks for i in r[k * batch : (k + 1) * batch])
        assert union == sorted(order[k * world * batch : (k + 1) * world * batch])


@pytest.mark.parametrize(
    ("field", "value"),
    [("batch_size", 0), ("val_fraction", 0.0), ("test_fraction", 1.0), ("label_noise", -0.1)],
)
def test_bad_arguments_name_the_field(field: str, value: float) -> None:
    """Out-of-range arguments raise with the field name."""
    with pytest.raises(ValueError, match=f"data.{field}"):
        DigitsDataModule(**{field: value})


def test_train_resample_seed_bootstraps_only_the_training_split() -> None:
    """A resample seed draws the training split with replacement (same size, same pool); the
    default keeps today's split, and val/test never change."""
    plain, first, again, other = (
        prepared(),
        prepared(train_resample_seed=1),
        prepared(train_resample_seed=1),
        prepared(train_resample_seed=2),
    )
    x_plain, y_plain = plain.splits["train"].tensors
    x_first, y_first = first.splits["train"].tensors
    assert len(y_first) == len(y_plain) == 1257
    assert torch.equal(x_first, again.splits["train"].tensors[0])
    assert not torch.equal(x_first, other.splits["train"].tensors[0])
    pool = {(tuple(x.flatten().tolist()), int(y)) for x, y in zip(x_plain, y_plain, strict=True)}
    drawn = [(tuple(x.flatten().tolist()), int(y)) for x, y in zip(x_first, y_first, strict=True)]
    assert set(drawn) <= pool
    assert 0.55 * 1257 < len(set(drawn)) < 0.7 * 1257  # about 1 - 1/e of the pool is distinct
    for split in ("val", "test"):
        assert torch.equal(plain.splits[split].tensors[0], first.splits[split].tensors[0])


def test_negative_train_resample_seed_names_the_field() -> None:
    """A negative resample seed raises naming the field."""
    with pytest.raises(ValueError, match="data.train_resample_seed"):
        DigitsDataModule(train_resample_seed=-1)
