"""Random mini-batches with random sizes, and the seeded generators that draw them.

Every distribution picks a uniformly random subset of the shard whose size B has mean `batch_size`,
so each sample is included with probability pi = batch_size / n and (1 / batch_size) sum_{j in B}
h_j is an unbiased estimate of the shard mean (1/n) sum_j h_j:

- binomial: sample j is included independently with probability pi (the paper's
  xi_ij ~ Bern(q)), so B ~ Binomial(n, pi) and can be 0;
- fixed: B = batch_size exactly;
- uniform: B uniform on {1, ..., 2 batch_size - 1}.

Node i draws from its own generator seeded by (seed, i), so one process simulating every node and
one process per node draw the same batches.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

BatchDistribution = Literal["binomial", "fixed", "uniform"]
DISTRIBUTIONS: tuple[str, ...] = ("binomial", "fixed", "uniform")


def node_generator(seed: int, node: int) -> torch.Generator:
    """Node `node`'s own sampling stream."""
    return torch.Generator().manual_seed(seed * 100_003 + node + 1)


def shared_generator(seed: int) -> torch.Generator:
    """The stream every node shares (the snapshot coin), identical on every rank."""
    return torch.Generator().manual_seed(seed * 100_003)


class BatchSampler:
    """Draws a random-size mini-batch of a shard of `shard_size` samples."""

    def __init__(self, distribution: str, batch_size: float, shard_size: int) -> None:
        if distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"batch_distribution: unknown {distribution!r}; allowed: {', '.join(DISTRIBUTIONS)}"
            )
        high = shard_size if distribution != "uniform" else (shard_size + 1) / 2
        if not 1 <= batch_size <= high:
            raise ValueError(
                f"batch_size: {batch_size} is outside [1, {high:g}] for the {distribution!r} "
                f"distribution on shards of {shard_size} samples"
            )
        if distribution != "binomial" and batch_size != int(batch_size):
            raise ValueError(
                f"batch_size: must be an integer for {distribution!r}, got {batch_size}"
            )
        self.distribution = distribution
        self.batch_size = batch_size
        self.shard_size = shard_size

    def draw(self, generator: torch.Generator) -> Tensor:
        """Indices of one mini-batch (int64, no repeats)."""
        n = self.shard_size
        if self.distribution == "binomial":
            keep = torch.rand(n, generator=generator, dtype=torch.float64) < self.batch_size / n
            return torch.nonzero(keep).flatten()
        size = int(self.batch_size)
        if self.distribution == "uniform":
            size = int(torch.randint(1, 2 * size, (1,), generator=generator))
        return torch.randperm(n, generator=generator)[:size]

    def draw_rows(self, generators: list[torch.Generator]) -> tuple[Tensor, Tensor]:
        """One batch per node, padded to the longest: indices [R, B] and weights [R, B] that are
        1 / batch_size on real entries and 0 on padding."""
        batches = [self.draw(generator) for generator in generators]
        width = max(len(batch) for batch in batches)
        index = torch.zeros(len(batches), width, dtype=torch.int64)
        weight = torch.zeros(len(batches), width, dtype=torch.float64)
        for row, batch in enumerate(batches):
            index[row, : len(batch)] = batch
            weight[row, : len(batch)] = 1.0 / self.batch_size
        return index, weight
