"""Synthetic attention inputs: clustered keys with one needle (the paper's CPU stand-in).

Keys are drawn around a few cluster centres (so attention mass is uneven and a good sample must
cover every cluster); values carry their cluster's mean plus noise. One token in the middle is
a needle: its key is the shared query direction, scaled up, and its value is large, so every
query puts noticeable weight on it and a method that drops it pays. Queries are that direction
plus one cluster centre each, plus noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class AttentionInputs:
    """keys [..., n, d], values [..., n, d], observation queries [..., w, d] (the last prompt
    positions, for SnapKV), test queries [..., q, d], and the needle's position."""

    keys: Tensor
    values: Tensor
    observation_queries: Tensor
    queries: Tensor
    needle: int


def clustered_with_needle(
    shape: tuple[int, ...],
    tokens: int,
    dim: int,
    clusters: int = 16,
    observation: int = 32,
    queries: int = 64,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> AttentionInputs:
    """Clustered keys with a needle at position tokens // 2, batched over `shape` (batch, heads).

    Scales: centres have norm about 2 * dim^(1/4) so a query's logits against its own cluster
    stand about 4 above the rest; the needle's key is the query direction times 3.2 dim^(1/4).
    """
    for name, value in (("tokens", tokens), ("dim", dim), ("clusters", clusters)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")

    def normal(*size: int) -> Tensor:
        return torch.randn(*shape, *size, generator=generator, device=device)

    scale = 2.0 * dim**0.25
    centres = normal(clusters, dim) / dim**0.5 * scale
    value_centres = normal(clusters, dim)
    assign = torch.randint(clusters, (*shape, tokens), generator=generator, device=device)
    index = assign.unsqueeze(-1).expand(*shape, tokens, dim)
    keys = centres.gather(-2, index) + 0.3 * normal(tokens, dim)
    values = value_centres.gather(-2, index) + 0.5 * normal(tokens, dim)
    direction = normal(1, dim)
    direction = direction / torch.linalg.vector_norm(direction, dim=-1, keepdim=True)
    needle = tokens // 2
    keys[..., needle, :] = 1.6 * scale * direction[..., 0, :]
    values[..., needle, :] = 2.0 * normal(dim)

    def draw(count: int) -> Tensor:
        picks = torch.randint(clusters, (*shape, count), generator=generator, device=device)
        own = centres.gather(-2, picks.unsqueeze(-1).expand(*shape, count, dim))
        return own + scale * direction + 0.3 * normal(count, dim)

    return AttentionInputs(keys, values, draw(observation), draw(queries), needle)
