"""Baselines under BalanceKV's interface, each keeping floor(n / 2^k) of n tokens.

- `UniformHalving`: the same halving with fair coin signs (the paper's uniform sampling); kept
  tokens get the same weights 2 / 1, an unbiased estimate of the attention sums.
- `KeyNorm`: the tokens with the smallest key norm (kvpress's Knorm).
- `RecentWindow`: the most recent tokens (StreamingLLM once `sink_tokens` are set).
- `SnapKV`: the tokens that the observation-window queries attend to most, after 1D average
  pooling over positions (SnapKV's clustering step).
Score-based baselines keep their tokens with weight 1 (log-weight 0), as those methods do.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn import functional as F

from optiforge.algorithms.kv_compression.balanced_walk import recursive_halving
from optiforge.algorithms.kv_compression.base import KVCompressor


class UniformHalving(KVCompressor):
    """k rounds of: random signs, `halve` (weights multiply as in BalanceKV)."""

    def select(
        self,
        keys: Tensor,
        values: Tensor,
        queries: Tensor | None,
        generator: torch.Generator | None,
    ) -> tuple[Tensor, Tensor]:
        def coins(kept_keys: Tensor, kept_values: Tensor) -> Tensor:
            draws = torch.rand(kept_keys.shape[:-1], generator=generator, device=keys.device)
            return torch.where(draws < 0.5, 1.0, -1.0)

        return recursive_halving(keys, values, self.halvings, coins)


class _TopScore(KVCompressor):
    """Keeps the floor(n / 2^k) tokens of highest `score`, in their original order."""

    def score(self, keys: Tensor, values: Tensor, queries: Tensor | None) -> Tensor:
        """Scores [..., n] (higher is kept)."""
        raise NotImplementedError

    def select(
        self,
        keys: Tensor,
        values: Tensor,
        queries: Tensor | None,
        generator: torch.Generator | None,
    ) -> tuple[Tensor, Tensor]:
        kept = keys.shape[-2] >> self.halvings
        index = self.score(keys, values, queries).topk(kept, dim=-1).indices.sort(-1).values
        return index, keys.new_zeros(index.shape)


class KeyNorm(_TopScore):
    """Keeps the keys of smallest L2 norm (Devoto et al. 2024; kvpress KnormPress)."""

    def score(self, keys: Tensor, values: Tensor, queries: Tensor | None) -> Tensor:
        return -torch.linalg.vector_norm(keys, dim=-1)


class RecentWindow(_TopScore):
    """Keeps the most recent tokens; with sink tokens this is StreamingLLM."""

    def score(self, keys: Tensor, values: Tensor, queries: Tensor | None) -> Tensor:
        return torch.arange(keys.shape[-2], device=keys.device, dtype=keys.dtype).expand(
            keys.shape[:-1]
        )


class SnapKV(_TopScore):
    """Attention of the observation queries [..., w, d], averaged over them and pooled.

    Args:
        rate, sink_tokens, recent_tokens: as `KVCompressor`.
        kernel_size: odd width of the average pooling over positions (SnapKV and kvpress: 5).
    """

    needs_queries = True

    def __init__(
        self, rate: float, sink_tokens: int = 0, recent_tokens: int = 0, kernel_size: int = 5
    ) -> None:
        super().__init__(rate, sink_tokens, recent_tokens)
        if kernel_size < 1 or kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be an odd integer >= 1, got {kernel_size}")
        self.kernel_size = kernel_size

    def score(self, keys: Tensor, values: Tensor, queries: Tensor | None) -> Tensor:
        assert queries is not None  # checked by KVCompressor.compress
        logits = queries @ keys.transpose(-1, -2) / math.sqrt(keys.shape[-1])
        scores = torch.softmax(logits, dim=-1).mean(-2)
        pooled = F.avg_pool1d(
            scores.reshape(-1, 1, scores.shape[-1]),
            self.kernel_size,
            stride=1,
            padding=self.kernel_size // 2,
            count_include_pad=False,
        )
        return pooled.reshape(scores.shape)
