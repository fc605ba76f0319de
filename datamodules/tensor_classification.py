"""In-memory classification data: seeded splits, optional label noise, rank-aware shuffling.

Subclasses only say how to load the arrays (`load_arrays`); everything that decides which sample
lands in which batch lives here, so that resuming and DDP reproduce the same batches.
"""

from __future__ import annotations

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from optiforge.datamodules.world import trainer_world


class TensorClassificationDataModule(L.LightningDataModule):
    """Splits features `x` and integer labels `y` into train/val/test and serves them in batches.

    Shuffling uses a `DistributedSampler` seeded with `seed` (epoch-dependent through Lightning's
    `set_epoch`), also on one process. Its order does not depend on the RNG state at resume time,
    and rank r of k processes with batch b sees exactly the samples that one process with batch
    k*b sees, so 1-process and k-process runs follow the same trajectory.

    Args:
        batch_size: training batch size per process.
        eval_batch_size: batch size for validation, test and predict.
        val_fraction: share of all samples held out for validation, in (0, 1).
        test_fraction: share of all samples held out for testing, in (0, 1).
        label_noise: share of training labels replaced by a uniformly drawn *different* class,
            in [0, 1) (symmetric label noise, used by the SAM experiments).
        seed: seed of the split, the noise and the shuffling order.
        num_workers: DataLoader worker processes.
        drop_last: drop the last, incomplete training batch of each epoch (m-SAM needs every
            batch to split into whole micro-batches).
        train_resample_seed: None keeps the training split as is; an integer replaces it by a
            bootstrap resample of itself (same size, drawn with replacement, after the label
            noise) seeded by this value, so that retrainings see independent training sets
            (the generalization diagnostic, `optiforge.algorithms.generalization`).
    """

    def __init__(
        self,
        batch_size: int = 64,
        eval_batch_size: int = 512,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        label_noise: float = 0.0,
        seed: int = 0,
        num_workers: int = 0,
        drop_last: bool = False,
        train_resample_seed: int | None = None,
    ) -> None:
        super().__init__()
        for name, value in (("batch_size", batch_size), ("eval_batch_size", eval_batch_size)):
            if value < 1:
                raise ValueError(f"data.{name} must be >= 1, got {value}")
        for name, value in (("val_fraction", val_fraction), ("test_fraction", test_fraction)):
            if not 0.0 < value < 1.0:
                raise ValueError(f"data.{name} must be in (0, 1), got {value}")
        if val_fraction + test_fraction >= 1.0:
            raise ValueError(
                "data.val_fraction + data.test_fraction must be < 1, "
                f"got {val_fraction + test_fraction}"
            )
        if not 0.0 <= label_noise < 1.0:
            raise ValueError(f"data.label_noise must be in [0, 1), got {label_noise}")
        if num_workers < 0:
            raise ValueError(f"data.num_workers must be >= 0, got {num_workers}")
        if train_resample_seed is not None and train_resample_seed < 0:
            raise ValueError(
                f"data.train_resample_seed must be None or >= 0, got {train_resample_seed}"
            )
        self.save_hyperparameters()
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size
        self.val_fraction = val_fraction
        self.test_fraction = test_fraction
        self.label_noise = label_noise
        self.seed = seed
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.train_resample_seed = train_resample_seed
        self.splits: dict[str, TensorDataset] = {}

    def load_arrays(self) -> tuple[np.ndarray, ...]:
        """Return features [n, ...] (float), labels [n] (int in 0..num_classes-1), and optionally
        further per-sample arrays [n, ...] (e.g. group ids) that are split alongside."""
        raise NotImplementedError

    @property
    def num_classes(self) -> int:
        """Number of classes; subclasses know it without loading the data."""
        raise NotImplementedError

    def setup(self, stage: str | None = None) -> None:
        """Load once, split with a seeded permutation, corrupt training labels and bootstrap the
        training split if asked."""
        if self.splits:
            return
        x, y, *extras = self.load_arrays()
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(len(y))
        n_val = round(self.val_fraction * len(y))
        n_test = round(self.test_fraction * len(y))
        parts = {
            "val": order[:n_val],
            "test": order[n_val : n_val + n_test],
            "train": order[n_val + n_test :],
        }
        features = torch.as_tensor(x, dtype=torch.float32)
        labels = torch.as_tensor(y, dtype=torch.long)
        side = [torch.as_tensor(extra) for extra in extras]
        for split, index in parts.items():
            split_labels = labels[index].clone()
            if split == "train" and self.label_noise > 0:
                split_labels = self._corrupt(split_labels, rng)
            if split == "train" and self.train_resample_seed is not None:
                draw = np.random.default_rng(self.train_resample_seed)
                picks = torch.as_tensor(draw.integers(0, len(index), size=len(index)))
                index, split_labels = index[picks.numpy()], split_labels[picks]
            self.splits[split] = TensorDataset(
                features[index], split_labels, *(extra[index] for extra in side)
            )

    def _corrupt(self, labels: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
        """Replace a `label_noise` share of labels by a different class, chosen uniformly."""
        n_noisy = round(self.label_noise * len(labels))
        noisy = torch.as_tensor(rng.choice(len(labels), size=n_noisy, replace=False))
        shift = torch.as_tensor(rng.integers(1, self.num_classes, size=n_noisy))
        labels[noisy] = (labels[noisy] + shift) % self.num_classes
        return labels

    def train_dataloader(self) -> DataLoader:
        world_size, rank = trainer_world(self)
        sampler = DistributedSampler(
            self.splits["train"], num_replicas=world_size, rank=rank, shuffle=True, seed=self.seed
        )
        return DataLoader(
            self.splits["train"],
            batch_size=self.batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
            drop_last=self.drop_last,
        )

    def _eval_loader(self, split: str) -> DataLoader:
        return DataLoader(
            self.splits[split], batch_size=self.eval_batch_size, num_workers=self.num_workers
        )

    def val_dataloader(self) -> DataLoader:
        return self._eval_loader("val")

    def test_dataloader(self) -> DataLoader:
        return self._eval_loader("test")

    def predict_dataloader(self) -> DataLoader:
        return self._eval_loader("test")
