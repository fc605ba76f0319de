"""Preference batches for Pareto set learning: uniform simplex draws to train, a simplex
lattice to validate."""

from __future__ import annotations

from collections.abc import Iterator

import lightning as L
import torch
from torch import Tensor
from torch.utils.data import DataLoader, IterableDataset

from optiforge.problems.multiobjective.reference_directions import lattice_near, uniform_simplex


class PreferenceDraws(IterableDataset):
    """`steps` batches of `batch_size` preferences uniform on the `num_obj`-simplex; pass `e`
    draws from the generator seeded `seed + e` (reproducible, fresh every epoch)."""

    def __init__(self, num_obj: int, batch_size: int, steps: int, seed: int) -> None:
        self.num_obj, self.batch_size, self.steps, self.seed = num_obj, batch_size, steps, seed
        self.passes = 0

    def __iter__(self) -> Iterator[Tensor]:
        generator = torch.Generator().manual_seed(self.seed + self.passes)
        self.passes += 1
        for _ in range(self.steps):
            yield uniform_simplex(self.batch_size, self.num_obj, generator).float()

    def __len__(self) -> int:
        return self.steps


class PreferenceDataModule(L.LightningDataModule):
    """Args:
    num_obj: objectives (2 or more). preferences_per_step: K preferences per training batch
    (Neural-ES uses 5 D / 16). steps_per_epoch: training batches per epoch.
    eval_preferences: at most this many lattice preferences in the single validation batch.
    seed: draw seed.
    """

    def __init__(
        self,
        num_obj: int = 2,
        preferences_per_step: int = 10,
        steps_per_epoch: int = 100,
        eval_preferences: int = 100,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, value, low in (
            ("num_obj", num_obj, 2),
            ("preferences_per_step", preferences_per_step, 1),
            ("steps_per_epoch", steps_per_epoch, 1),
            ("eval_preferences", eval_preferences, num_obj),
        ):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        self.save_hyperparameters()
        self.train_draws = PreferenceDraws(num_obj, preferences_per_step, steps_per_epoch, seed)

    def state_dict(self) -> dict[str, int]:
        """The number of training passes drawn, so that a resumed fit draws the next ones."""
        return {"passes": self.train_draws.passes}

    def load_state_dict(self, state_dict: dict[str, int]) -> None:
        """Continue the draws after `state_dict["passes"]` passes."""
        self.train_draws.passes = state_dict["passes"]

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.train_draws, batch_size=None)

    def val_dataloader(self) -> DataLoader:
        lattice = lattice_near(self.hparams.num_obj, self.hparams.eval_preferences).float()
        return DataLoader([lattice], batch_size=None)
