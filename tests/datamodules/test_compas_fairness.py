"""CompasFairnessDataModule: group ids from the real CSV, merged race groups, full-batch serving."""

from __future__ import annotations

import csv

import pytest
import torch

from optiforge.datamodules import CompasFairnessDataModule
from optiforge.datamodules.full_batch import RepeatedFullBatch
from optiforge.problems.data_paths import data_path


def test_groups_follow_the_csv_with_small_race_groups_merged() -> None:
    """Sex/race group codes match the CSV counts; Other, Asian, Native American merged."""
    data = CompasFairnessDataModule(sensitive_attributes=["sex", "race"])
    data.setup("fit")
    groups = torch.cat([data.splits[s].tensors[2] for s in ("train", "val", "test")])
    assert groups.shape == (7214, 2)
    with open(data_path("compas/compas.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    females = sum(row["sex"] == "Female" for row in rows)
    other = sum(row["race"] in ("Other", "Asian", "Native American") for row in rows)
    assert int((groups[:, 0] == 1).sum()) == females == 1395
    assert int((groups[:, 1] == 3).sum()) == other == 377 + 32 + 18
    assert data.group_names == {
        "sex": ("Male", "Female"),
        "race": ("African-American", "Caucasian", "Hispanic", "Other"),
    }


def test_group_ids_agree_with_the_one_hot_features() -> None:
    """Features hold one-hot sex at columns 5-6 and race at 10-15; ids must match them."""
    data = CompasFairnessDataModule()
    data.setup("fit")
    x, _, groups = data.splits["train"].tensors
    assert torch.equal(x[:, 5:7].argmax(1), groups[:, 1])
    race = x[:, 10:16].argmax(1)
    assert torch.equal(race.clamp(max=3), groups[:, 0])  # Asian (4), Native American (5) -> 3


def test_full_batch_loader_serves_the_whole_training_split() -> None:
    """With full_batch_steps=3 the loader yields the whole training split three times."""
    data = CompasFairnessDataModule(full_batch_steps=3)
    data.setup("fit")
    batches = list(data.train_dataloader())
    assert len(batches) == 3
    for x, y, groups in batches:
        assert torch.equal(x, data.splits["train"].tensors[0])
        assert len(y) == len(groups) == len(data.splits["train"])


def test_full_batch_shards_are_disjoint_and_cover_the_rows() -> None:
    """Two ranks' full-batch shards are disjoint and cover the rows; an uneven split raises."""
    rows = torch.arange(10)
    shards = [RepeatedFullBatch((rows,), 2, world_size=2, rank=r)[0][0] for r in (0, 1)]
    assert torch.equal(torch.cat(shards), rows)
    with pytest.raises(ValueError, match="10 training rows to split evenly over 3 processes"):
        RepeatedFullBatch((rows,), 2, world_size=3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sensitive_attributes": ["age"]}, r"'age' is not one of \['race', 'sex'\]"),
        ({"sensitive_attributes": []}, "must name at least one attribute"),
        ({"full_batch_steps": 0}, "data.full_batch_steps must be >= 1"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Bad sensitive_attributes or full_batch_steps raise a ValueError naming the field."""
    with pytest.raises(ValueError, match=message):
        CompasFairnessDataModule(**kwargs)
