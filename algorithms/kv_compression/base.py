"""The interface every KV-cache compressor shares: a rate 1/2^k, sink tokens, a recent window.

`compress` keeps the first `sink_tokens` and the last `recent_tokens` tokens exactly and lets the
method `select` floor(n_mid / 2^k) of the n_mid tokens in between, so every method keeps the same
number of tokens at the same rate (BalanceKV's recursive halving fixes that count).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch
from torch import Tensor

from optiforge.algorithms.kv_compression.compressed import CompressedKV


def halvings_for_rate(rate: float) -> int:
    """k with rate = 1/2^k (k >= 0); any other rate is a ValueError naming `rate`."""
    if not 0.0 < rate <= 1.0 or not math.isfinite(rate):
        raise ValueError(f"rate must be a power of 1/2 (1, 1/2, 1/4, ...), got {rate}")
    halvings = round(-math.log2(rate))
    if rate != 0.5**halvings:
        raise ValueError(f"rate must be a power of 1/2 (1, 1/2, 1/4, ...), got {rate}")
    return halvings


def gather_tokens(tokens: Tensor, index: Tensor) -> Tensor:
    """tokens[..., index[..., j], :] for tokens [..., n, d] and index [..., m]."""
    return tokens.gather(-2, index.unsqueeze(-1).expand(*index.shape, tokens.shape[-1]))


class KVCompressor(ABC):
    """Compresses keys [..., n, d] and values [..., n, dv] to rate * n tokens plus the exact ones.

    Args:
        rate: kept share of the compressible tokens, a power of 1/2 (1 keeps everything).
        sink_tokens: first tokens always kept exactly (attention sinks), >= 0.
        recent_tokens: last tokens always kept exactly (the recent window), >= 0.
    """

    needs_queries: bool = False

    def __init__(self, rate: float, sink_tokens: int = 0, recent_tokens: int = 0) -> None:
        self.halvings = halvings_for_rate(rate)
        self.rate = rate
        for name, value in (("sink_tokens", sink_tokens), ("recent_tokens", recent_tokens)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        self.sink_tokens = sink_tokens
        self.recent_tokens = recent_tokens

    def budget(self, n: int) -> int:
        """Tokens kept out of n: the sinks, the window and floor(n_mid / 2^k) of the rest."""
        middle = n - self.sink_tokens - self.recent_tokens
        return self.sink_tokens + self.recent_tokens + (middle >> self.halvings)

    def compress(
        self,
        keys: Tensor,
        values: Tensor,
        queries: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> CompressedKV:
        """Keep sinks and recent window exactly, `select` among the tokens in between.

        queries: [..., w, d] observation queries (the last prompt positions), used by the methods
        with `needs_queries`; generator: randomness of the randomized methods.
        """
        n = keys.shape[-2]
        if self.sink_tokens + self.recent_tokens > n:
            raise ValueError(
                f"sink_tokens + recent_tokens must be <= the {n} tokens to compress, got "
                f"sink_tokens={self.sink_tokens}, recent_tokens={self.recent_tokens}"
            )
        if self.needs_queries and queries is None:
            raise ValueError(f"{type(self).__name__} needs queries (the observation window)")
        start, stop = self.sink_tokens, n - self.recent_tokens
        middle = self.reduce(
            keys[..., start:stop, :], values[..., start:stop, :], start, queries, generator
        )
        return CompressedKV.concat(
            [
                CompressedKV.exact(keys[..., :start, :], values[..., :start, :], 0),
                middle,
                CompressedKV.exact(keys[..., stop:, :], values[..., stop:, :], stop),
            ]
        )

    def reduce(
        self,
        keys: Tensor,
        values: Tensor,
        start: int,
        queries: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> CompressedKV:
        """`select` applied to compressible tokens only (no sinks, no window), the first of
        which sits at position `start`."""
        if self.halvings == 0:
            return CompressedKV.exact(keys, values, start)
        index, log_weights = self.select(keys, values, queries, generator)
        return CompressedKV(
            keys=gather_tokens(keys, index),
            values=gather_tokens(values, index),
            log_weights=log_weights,
            positions=index + start,
        )

    @abstractmethod
    def select(
        self,
        keys: Tensor,
        values: Tensor,
        queries: Tensor | None,
        generator: torch.Generator | None,
    ) -> tuple[Tensor, Tensor]:
        """Index [..., n >> k] (increasing) of the kept tokens of keys [..., n, d], and their
        log-weights [..., n >> k]."""
