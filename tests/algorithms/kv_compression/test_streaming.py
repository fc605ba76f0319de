"""Streaming compression: one chunk equals one-shot, memory stays within budget plus a chunk."""

from __future__ import annotations

import pytest
import torch

from optiforge.algorithms.kv_compression import (
    BalanceKV,
    KeyNorm,
    SnapKV,
    StreamingCompressor,
    UniformHalving,
)
from tests.devices import DEVICES


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", [BalanceKV, UniformHalving, KeyNorm])
def test_single_chunk_stream_equals_one_shot(method: type, device: str) -> None:
    """Tokens fed in uneven pieces, chunk = all compressible tokens: the same kept tokens and
    weights as one-shot compression with the same seed."""
    generator = torch.Generator(device).manual_seed(0)
    keys, values = (torch.randn(2, 3, 300, 8, generator=generator, device=device) for _ in "kv")
    compressor = method(0.25, sink_tokens=4, recent_tokens=40)
    one_shot = compressor.compress(keys, values, generator=torch.Generator(device).manual_seed(7))
    stream = StreamingCompressor(compressor, 256, torch.Generator(device).manual_seed(7))
    for start in range(0, 300, 37):
        stream.append(keys[..., start : start + 37, :], values[..., start : start + 37, :])
    streamed = stream.cache()
    assert torch.equal(streamed.positions, one_shot.positions)
    assert torch.equal(streamed.log_weights, one_shot.log_weights)
    assert torch.equal(streamed.values, one_shot.values)


def test_memory_stays_within_budget_plus_a_chunk() -> None:
    """After every piece of a 2000-token stream, held tokens <= sinks + window + rate * seen +
    chunk; at the end, 9 compressed chunks of 200 hold 9 * 25 tokens."""
    compressor = BalanceKV(0.125, sink_tokens=4, recent_tokens=16, block_size=64)
    stream = StreamingCompressor(compressor, 200, torch.Generator().manual_seed(0))
    keys = torch.randn(1, 2, 2000, 8, generator=torch.Generator().manual_seed(1))
    for seen in range(50, 2001, 50):
        stream.append(keys[..., seen - 50 : seen, :], keys[..., seen - 50 : seen, :])
        held = stream.cache().num_tokens
        assert held <= 4 + 16 + seen * 0.125 + 200
    compressed = sum(part.num_tokens for part in stream.parts) - 4
    assert compressed == 9 * 25  # (2000 - 4 - 16) // 200 chunks


def test_stream_arguments_are_checked() -> None:
    """chunk_size 0, a method that needs queries, and an empty stream fail naming the issue."""
    with pytest.raises(ValueError, match="chunk_size must be >= 1, got 0"):
        StreamingCompressor(BalanceKV(0.5), 0)
    with pytest.raises(ValueError, match="compressor: SnapKV needs observation queries"):
        StreamingCompressor(SnapKV(0.5), 16)
    with pytest.raises(ValueError, match="no tokens appended yet"):
        StreamingCompressor(BalanceKV(0.5), 16).cache()
