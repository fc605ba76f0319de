"""Full-batch training: the same whole training set, `steps` times per epoch, sharded by rank.

Full-batch methods (the equality-constrained experiments, PINNs) take thousands of steps on a
few thousand samples; one step per Lightning epoch would pay epoch-end work (checkpointing,
validation) at every step. This loader makes one epoch = `steps` full-batch steps.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset


class RepeatedFullBatch(Dataset):
    """`steps` items, each the tuple of whole tensors (this rank's contiguous shard of each).

    The tensors may differ in length (e.g. interior and boundary points of a PINN); each is
    sharded on its own and must split evenly over the processes.
    """

    def __init__(
        self, tensors: tuple[torch.Tensor, ...], steps: int, world_size: int = 1, rank: int = 0
    ) -> None:
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        for tensor in tensors:
            if len(tensor) % world_size != 0:
                raise ValueError(
                    f"full-batch training needs the {len(tensor)} training rows to split evenly "
                    f"over {world_size} processes (equal shards keep the averaged gradient exact)"
                )
        self.tensors = tuple(
            t[rank * (len(t) // world_size) : (rank + 1) * (len(t) // world_size)] for t in tensors
        )
        self.steps = steps

    def __len__(self) -> int:
        return self.steps

    def __getitem__(self, index: int) -> tuple[torch.Tensor, ...]:
        return self.tensors


def full_batch_loader(
    tensors: tuple[torch.Tensor, ...], steps: int, world_size: int = 1, rank: int = 0
) -> DataLoader:
    """DataLoader yielding this rank's shard of `tensors` as one batch, `steps` times."""
    return DataLoader(RepeatedFullBatch(tensors, steps, world_size, rank), batch_size=None)
