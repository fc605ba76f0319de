"""KV-cache compression: BalanceKV (vector balancing, Han et al. 2025), its baselines (uniform
halving, key norm, recent window / StreamingLLM, SnapKV) under one interface, streaming, the
log-weight-biased attention and error metric. `BalanceKVPress` (kvpress, extra `kv`) lives in
`optiforge.algorithms.kv_compression.press`, outside these lazy names, so the core install needs
no kvpress."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.kv_compression.attention import relative_error, weighted_attention
    from optiforge.algorithms.kv_compression.balanced_walk import (
        balance_kernel,
        halve,
        halve_authors,
        self_balancing_walk,
    )
    from optiforge.algorithms.kv_compression.balancekv import BalanceKV
    from optiforge.algorithms.kv_compression.base import KVCompressor, halvings_for_rate
    from optiforge.algorithms.kv_compression.baselines import (
        KeyNorm,
        RecentWindow,
        SnapKV,
        UniformHalving,
    )
    from optiforge.algorithms.kv_compression.compressed import CompressedKV
    from optiforge.algorithms.kv_compression.streaming import StreamingCompressor

__all__ = [
    "BalanceKV",
    "CompressedKV",
    "KVCompressor",
    "KeyNorm",
    "RecentWindow",
    "SnapKV",
    "StreamingCompressor",
    "UniformHalving",
    "balance_kernel",
    "halve",
    "halve_authors",
    "halvings_for_rate",
    "relative_error",
    "self_balancing_walk",
    "weighted_attention",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.kv_compression.attention": ("relative_error", "weighted_attention"),
        "optiforge.algorithms.kv_compression.balancekv": ("BalanceKV",),
        "optiforge.algorithms.kv_compression.balanced_walk": (
            "balance_kernel",
            "halve",
            "halve_authors",
            "self_balancing_walk",
        ),
        "optiforge.algorithms.kv_compression.base": ("KVCompressor", "halvings_for_rate"),
        "optiforge.algorithms.kv_compression.baselines": (
            "KeyNorm",
            "RecentWindow",
            "SnapKV",
            "UniformHalving",
        ),
        "optiforge.algorithms.kv_compression.compressed": ("CompressedKV",),
        "optiforge.algorithms.kv_compression.streaming": ("StreamingCompressor",),
    },
)
