"""Digits served full batch with a seeded subset of training samples marked for constraints.

The interpolating-classifier experiment asks `loss_i = 0` for every sample i of a subset of the
training split: one equality constraint (and one multiplier) per sample. Entry j of the residual
vector must be the same sample on every step, so the whole training split is served, in a fixed
order, on every step.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader

from optiforge.datamodules.digits import DigitsDataModule
from optiforge.datamodules.full_batch import full_batch_loader
from optiforge.datamodules.world import trainer_world


class DigitsInterpolationDataModule(DigitsDataModule):
    """Training batches (x [n, 1, 8, 8], y [n], constrained [n] bool): the whole training split.

    A boolean mask (rather than "the first k rows") marks the `constrained_samples` samples drawn
    uniformly without replacement from the training split with a generator seeded by `seed`;
    the rows keep the split's order, so masked rows come out in the same order on every step.
    `constrained_split()` returns the constrained samples (x, y) for evaluation after training.

    Label noise (if any) is applied to the training split before the subset is drawn, so noisy
    samples can be constrained too (the model must then memorize their wrong labels).

    Per-sample multipliers need every process to hold the same samples in the same order, which
    sharding would break: more than one process is refused.

    Args:
        constrained_samples: size k of the constrained subset, 1 <= k <= training-split size.
        steps_per_epoch: full-batch steps per epoch.
        eval_batch_size, val_fraction, test_fraction, label_noise, seed, num_workers: those of
            `TensorClassificationDataModule`.
    """

    def __init__(
        self,
        constrained_samples: int = 100,
        steps_per_epoch: int = 100,
        eval_batch_size: int = 512,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        label_noise: float = 0.0,
        seed: int = 0,
        num_workers: int = 0,
    ) -> None:
        if constrained_samples < 1:
            raise ValueError(f"data.constrained_samples must be >= 1, got {constrained_samples}")
        if steps_per_epoch < 1:
            raise ValueError(f"data.steps_per_epoch must be >= 1, got {steps_per_epoch}")
        super().__init__(
            eval_batch_size=eval_batch_size,
            val_fraction=val_fraction,
            test_fraction=test_fraction,
            label_noise=label_noise,
            seed=seed,
            num_workers=num_workers,
        )
        self.constrained_samples = constrained_samples
        self.steps_per_epoch = steps_per_epoch
        self.constrained_mask = torch.zeros(0, dtype=torch.bool)

    def setup(self, stage: str | None = None) -> None:
        """Split (once), then draw the constrained subset of the training split."""
        self._require_single_process()
        super().setup(stage)
        if len(self.constrained_mask):
            return
        n_train = len(self.splits["train"])
        if self.constrained_samples > n_train:
            raise ValueError(
                f"data.constrained_samples must be <= the {n_train} training samples, "
                f"got {self.constrained_samples}"
            )
        generator = torch.Generator().manual_seed(self.seed)
        chosen = torch.randperm(n_train, generator=generator)[: self.constrained_samples]
        self.constrained_mask = torch.zeros(n_train, dtype=torch.bool)
        self.constrained_mask[chosen] = True

    def _require_single_process(self) -> None:
        world_size, _ = trainer_world(self)
        if world_size > 1:
            raise ValueError(
                f"DigitsInterpolationDataModule: per-sample constraints need one process, got "
                f"world_size={world_size} (each rank would hold different constrained samples)"
            )

    def constrained_split(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, y) of the constrained training samples, in the order of the training batches."""
        x, y = self.splits["train"].tensors
        return x[self.constrained_mask], y[self.constrained_mask]

    def train_dataloader(self) -> DataLoader:
        self._require_single_process()
        x, y = self.splits["train"].tensors
        return full_batch_loader((x, y, self.constrained_mask), self.steps_per_epoch)
