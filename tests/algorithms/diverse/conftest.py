"""Tiny shards for the DIVERSE tests: a seeded random regression instance, float64."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor


def random_shards(nodes: int, shard: int, dim: int, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Features [nodes, shard, dim] and targets [nodes, shard] with node-dependent offsets, so
    the nodes' local saddles differ (heterogeneous shards)."""
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(nodes, shard, dim, generator=generator, dtype=torch.float64)
    offsets = torch.linspace(-1.0, 1.0, nodes, dtype=torch.float64)[:, None]
    targets = torch.randn(nodes, shard, generator=generator, dtype=torch.float64) + offsets
    return features / dim**0.5, targets


@pytest.fixture
def shards() -> tuple[Tensor, Tensor]:
    return random_shards(nodes=4, shard=30, dim=3)
