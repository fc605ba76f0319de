"""Streaming compression: tokens arrive in blocks, memory stays within the budget plus a block.

The first `sink_tokens` tokens are kept as they come; the `recent_tokens` latest tokens wait
exactly in a buffer; each time `chunk_size` older tokens have gathered behind the window, that
chunk is compressed at the compressor's rate and stored, never touched again. After n tokens at
most sinks + window + rate * n + chunk_size tokens are held (the one-shot budget plus one chunk),
and a stream of one chunk gives exactly the one-shot result.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.kv_compression.base import KVCompressor
from optiforge.algorithms.kv_compression.compressed import CompressedKV


class StreamingCompressor:
    """Feeds a `KVCompressor` chunk by chunk; `cache()` is the compressed cache so far.

    Args:
        compressor: any compressor without observation queries (not SnapKV).
        chunk_size: compressible tokens per compression call (>= 1); BalanceKV's cost per token
            grows with its block size, not with this.
        generator: randomness of the compressor, kept across chunks.
    """

    def __init__(
        self,
        compressor: KVCompressor,
        chunk_size: int,
        generator: torch.Generator | None = None,
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if compressor.needs_queries:
            raise ValueError(
                f"compressor: {type(compressor).__name__} needs observation queries and cannot "
                "stream; use BalanceKV, UniformHalving, KeyNorm or RecentWindow"
            )
        self.compressor = compressor
        self.chunk_size = chunk_size
        self.generator = generator
        self.parts: list[CompressedKV] = []
        self.pending_keys: Tensor | None = None
        self.pending_values: Tensor | None = None
        self.pending_start = 0

    def append(self, keys: Tensor, values: Tensor) -> None:
        """Add tokens keys [..., t, d], values [..., t, dv]; compress every full chunk."""
        if self.pending_keys is None:
            self.pending_keys, self.pending_values = keys, values
        else:
            self.pending_keys = torch.cat([self.pending_keys, keys], dim=-2)
            self.pending_values = torch.cat([self.pending_values, values], dim=-2)
        sinks = self.compressor.sink_tokens - self.pending_start
        if sinks > 0:
            self._pop(min(sinks, self.pending_keys.shape[-2]), compress=False)
        while self.pending_keys.shape[-2] - self.compressor.recent_tokens >= self.chunk_size:
            self._pop(self.chunk_size, compress=True)

    def _pop(self, count: int, compress: bool) -> None:
        """Move the first `count` pending tokens to the stored parts."""
        keys, values = self.pending_keys[..., :count, :], self.pending_values[..., :count, :]
        if compress:
            part = self.compressor.reduce(keys, values, self.pending_start, None, self.generator)
        else:
            part = CompressedKV.exact(keys, values, self.pending_start)
        self.parts.append(part)
        self.pending_keys = self.pending_keys[..., count:, :]
        self.pending_values = self.pending_values[..., count:, :]
        self.pending_start += count

    def cache(self) -> CompressedKV:
        """Stored parts, then the pending tokens (exact, weight 1)."""
        if self.pending_keys is None:
            raise ValueError("StreamingCompressor.cache(): no tokens appended yet")
        pending = CompressedKV.exact(self.pending_keys, self.pending_values, self.pending_start)
        return CompressedKV.concat([*self.parts, pending])
