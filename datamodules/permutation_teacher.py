"""Teacher-student regression for permutation-equivariant networks.

Inputs x ~ N(0, I) in R^{in_rep} (a permutation-invariant distribution), targets y = teacher(x)
from a random tied (S_n-equivariant) two-layer network whose hidden representation is
`teacher_hidden_blocks`, typically not the student's; so the loss is invariant under the group
acting on the student's weights, and whether the student can reach zero loss depends on its
hidden representation. Seeded: the same seed gives the same teacher and the same data.
Training is full batch (`full_batch_steps` steps per epoch); validation and test are one batch.
"""

from __future__ import annotations

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from optiforge.datamodules.full_batch import full_batch_loader
from optiforge.problems.equivariant.permutation_mlp import PermutationMLP


class PermutationTeacherDataModule(L.LightningDataModule):
    """Args:
    n: size of the permuted set (S_n).
    in_blocks / out_blocks: input and output representations (blocks: trivial, set, pairs).
    teacher_hidden_blocks: the teacher's hidden representation.
    train_size / val_size / test_size: samples per split (> 0).
    teacher_scale: standard deviation of the teacher's orbit values (each tied weight).
    full_batch_steps: full-batch training steps per epoch.
    seed: teacher and data seed.
    """

    def __init__(
        self,
        n: int = 4,
        in_blocks: tuple[str, ...] = ("set",),
        teacher_hidden_blocks: tuple[str, ...] = ("pairs",),
        out_blocks: tuple[str, ...] = ("trivial",),
        train_size: int = 2048,
        val_size: int = 1024,
        test_size: int = 4096,
        teacher_scale: float = 1.0,
        full_batch_steps: int = 100,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, value in (("train_size", train_size), ("val_size", val_size)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if test_size < 1 or teacher_scale <= 0 or full_batch_steps < 1:
            raise ValueError(
                "test_size and full_batch_steps must be >= 1 and teacher_scale > 0, got "
                f"{test_size}, {full_batch_steps}, {teacher_scale}"
            )
        self.save_hyperparameters()
        generator = torch.Generator().manual_seed(seed)
        self.teacher = PermutationMLP(n, in_blocks, teacher_hidden_blocks, out_blocks, tied=True)
        with torch.no_grad():
            for param in self.teacher.parameters():
                param.copy_(teacher_scale * torch.randn(param.shape, generator=generator))
        sizes = {"train": train_size, "val": val_size, "test": test_size}
        self.splits: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        for split, size in sizes.items():
            x = torch.randn(size, self.teacher.in_rep.dim, generator=generator)
            with torch.no_grad():
                self.splits[split] = (x, self.teacher(x))

    def train_dataloader(self) -> DataLoader:
        world = self.trainer.world_size if self.trainer else 1
        rank = self.trainer.global_rank if self.trainer else 0
        return full_batch_loader(self.splits["train"], self.hparams.full_batch_steps, world, rank)

    def val_dataloader(self) -> DataLoader:
        return self.whole("val")

    def test_dataloader(self) -> DataLoader:
        return self.whole("test")

    def whole(self, split: str) -> DataLoader:
        """One batch holding the whole split."""
        x, y = self.splits[split]
        return DataLoader(TensorDataset(x, y), batch_size=len(x))
