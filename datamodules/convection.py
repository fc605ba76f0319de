"""Collocation points for the 1-D convection equation on x in [0, 2 pi], t in [0, 1]."""

from __future__ import annotations

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from optiforge.datamodules.full_batch import full_batch_loader
from optiforge.datamodules.world import trainer_world
from optiforge.problems.convection import X_MAX


class ConvectionDataModule(L.LightningDataModule):
    """Seeded, fixed collocation sets served full batch; a regular grid for validation and test.

    Training batches are (interior [N_f, 2] of (x, t) drawn uniformly, initial x [N_ic, 1] for
    t = 0, boundary t [N_bc, 1] for the periodic condition at x = 0 and 2 pi); every step uses
    all of them (each rank its equal shard under DDP). Validation and test batches are the
    `grid_x` x `grid_t` grid (x in [0, 2 pi) without the duplicate periodic end, t in [0, 1]),
    one batch of [grid_x * grid_t, 2].

    Args:
        num_interior: interior (PDE residual) points.
        num_initial: initial-condition points.
        num_boundary: boundary-condition points.
        steps_per_epoch: full-batch steps per epoch.
        grid_x: evaluation grid points along x.
        grid_t: evaluation grid points along t.
        seed: seed of the collocation points.
    """

    def __init__(
        self,
        num_interior: int = 1000,
        num_initial: int = 256,
        num_boundary: int = 256,
        steps_per_epoch: int = 500,
        grid_x: int = 256,
        grid_t: int = 100,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, value in (
            ("num_interior", num_interior),
            ("num_initial", num_initial),
            ("num_boundary", num_boundary),
            ("steps_per_epoch", steps_per_epoch),
        ):
            if value < 1:
                raise ValueError(f"data.{name} must be >= 1, got {value}")
        for name, value in (("grid_x", grid_x), ("grid_t", grid_t)):
            if value < 2:
                raise ValueError(f"data.{name} must be >= 2, got {value}")
        self.save_hyperparameters()
        self.num_interior = num_interior
        self.num_initial = num_initial
        self.num_boundary = num_boundary
        self.steps_per_epoch = steps_per_epoch
        self.grid_x = grid_x
        self.grid_t = grid_t
        self.seed = seed
        self.collocation: tuple[torch.Tensor, ...] = ()
        self.grid = torch.empty(0, 2)

    def setup(self, stage: str | None = None) -> None:
        if self.collocation:
            return
        generator = torch.Generator().manual_seed(self.seed)
        interior = torch.rand(self.num_interior, 2, generator=generator)
        interior[:, 0] *= X_MAX
        initial = torch.rand(self.num_initial, 1, generator=generator) * X_MAX
        boundary = torch.rand(self.num_boundary, 1, generator=generator)
        self.collocation = (interior, initial, boundary)
        x = torch.arange(self.grid_x) * (X_MAX / self.grid_x)
        t = torch.linspace(0.0, 1.0, self.grid_t)
        grid_t, grid_x = torch.meshgrid(t, x, indexing="ij")
        self.grid = torch.stack([grid_x.reshape(-1), grid_t.reshape(-1)], dim=1)

    def train_dataloader(self) -> DataLoader:
        world_size, rank = trainer_world(self)
        return full_batch_loader(self.collocation, self.steps_per_epoch, world_size, rank)

    def _grid_loader(self) -> DataLoader:
        return DataLoader(TensorDataset(self.grid), batch_size=len(self.grid))

    def val_dataloader(self) -> DataLoader:
        return self._grid_loader()

    def test_dataloader(self) -> DataLoader:
        return self._grid_loader()
