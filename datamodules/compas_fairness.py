"""COMPAS with sensitive-group ids beside features and label, for demographic-parity constraints."""

from __future__ import annotations

import csv

import numpy as np
from torch.utils.data import DataLoader

from optiforge.datamodules.compas import CompasDataModule, encode_row
from optiforge.datamodules.full_batch import full_batch_loader
from optiforge.datamodules.world import trainer_world

# Asian (32 rows) and Native American (18 rows) are merged into Other, as in the paper's code:
# a parity constraint on a group of 18 people is mostly noise.
SENSITIVE_GROUPS: dict[str, tuple[str, ...]] = {
    "race": ("African-American", "Caucasian", "Hispanic", "Other"),
    "sex": ("Male", "Female"),
}
MERGED_INTO_OTHER = ("Asian", "Native American")


def group_index(attribute: str, value: str) -> int:
    """Index of `value` among the groups of `attribute` (after merging small race groups)."""
    if attribute == "race" and value in MERGED_INTO_OTHER:
        value = "Other"
    return SENSITIVE_GROUPS[attribute].index(value)


class CompasFairnessDataModule(CompasDataModule):
    """Batches (features [B, 18], label [B], groups [B, A]) with A = len(sensitive_attributes).

    The features are those of `CompasDataModule` (they include the one-hot race and sex, as in
    the paper's setting). Column a of `groups` holds the group index of attribute
    `sensitive_attributes[a]`; `group_names` lists the groups.

    Args:
        sensitive_attributes: any of "race" (4 groups) and "sex" (2 groups).
        full_batch_steps: if set, every training step sees the whole training split (this rank's
            equal shard under DDP) and one epoch is this many steps (the paper trains full batch).
        other arguments: those of `CompasDataModule`.
    """

    def __init__(
        self,
        sensitive_attributes: list[str] | None = None,
        full_batch_steps: int | None = None,
        path: str | None = None,
        batch_size: int = 256,
        eval_batch_size: int = 2048,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        seed: int = 0,
        num_workers: int = 0,
    ) -> None:
        attributes = ["race", "sex"] if sensitive_attributes is None else list(sensitive_attributes)
        if not attributes:
            raise ValueError("data.sensitive_attributes must name at least one attribute")
        for attribute in attributes:
            if attribute not in SENSITIVE_GROUPS:
                raise ValueError(
                    f"data.sensitive_attributes: {attribute!r} is not one of "
                    f"{sorted(SENSITIVE_GROUPS)}"
                )
        if full_batch_steps is not None and full_batch_steps < 1:
            raise ValueError(f"data.full_batch_steps must be >= 1 or null, got {full_batch_steps}")
        super().__init__(
            path, batch_size, eval_batch_size, val_fraction, test_fraction, 0.0, seed, num_workers
        )
        self.sensitive_attributes = attributes
        self.full_batch_steps = full_batch_steps

    @property
    def group_names(self) -> dict[str, tuple[str, ...]]:
        return {attribute: SENSITIVE_GROUPS[attribute] for attribute in self.sensitive_attributes}

    def load_arrays(self) -> tuple[np.ndarray, ...]:
        with open(self.path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        features = np.array([encode_row(row) for row in rows], dtype=np.float32)
        labels = np.array([int(row["two_year_recid"]) for row in rows], dtype=np.int64)
        groups = np.array(
            [[group_index(a, row[a]) for a in self.sensitive_attributes] for row in rows],
            dtype=np.int64,
        )
        return features, labels, groups

    def train_dataloader(self) -> DataLoader:
        if self.full_batch_steps is None:
            return super().train_dataloader()
        world_size, rank = trainer_world(self)
        return full_batch_loader(
            self.splits["train"].tensors, self.full_batch_steps, world_size, rank
        )
