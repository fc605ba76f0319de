"""Streaming stochastic submodular recommendation with on-demand visits (setting of Wang, Tu,
Oettershagen, Gionis): expected topic coverage, our bounded-memory on-demand recommender with a
proved competitive ratio, the known-visits / linear-memory adaptations, a swap pool, swap and
sieve streaming, offline greedy and brute force as references, synthetic, adversarial and
Shakespeare streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.submodular_streaming.adversarial import (
        burst_stream,
        duplicates_stream,
        worst_first_stream,
    )
    from optiforge.algorithms.submodular_streaming.coverage import (
        Coverage,
        expected_coverage,
        marginal_gains,
        survival,
    )
    from optiforge.algorithms.submodular_streaming.exact import brute_force_optimum
    from optiforge.algorithms.submodular_streaming.known_visits import KnownVisitsSwap
    from optiforge.algorithms.submodular_streaming.linear_memory import LinearMemoryGreedy
    from optiforge.algorithms.submodular_streaming.offline import offline_greedy
    from optiforge.algorithms.submodular_streaming.on_demand import (
        OnDemandStreaming,
        proved_ratio,
    )
    from optiforge.algorithms.submodular_streaming.protocol import (
        RunResult,
        StreamingRecommender,
        run,
        validate_schedule,
    )
    from optiforge.algorithms.submodular_streaming.sieve import SieveStreaming
    from optiforge.algorithms.submodular_streaming.stream import Stream, synthetic_stream
    from optiforge.algorithms.submodular_streaming.swap import SwapStreaming
    from optiforge.algorithms.submodular_streaming.swap_pool import SwapPoolStreaming
    from optiforge.algorithms.submodular_streaming.text_stream import shakespeare_stream

__all__ = [
    "Coverage",
    "KnownVisitsSwap",
    "LinearMemoryGreedy",
    "OnDemandStreaming",
    "RunResult",
    "SieveStreaming",
    "Stream",
    "StreamingRecommender",
    "SwapPoolStreaming",
    "SwapStreaming",
    "brute_force_optimum",
    "burst_stream",
    "duplicates_stream",
    "expected_coverage",
    "marginal_gains",
    "offline_greedy",
    "proved_ratio",
    "run",
    "shakespeare_stream",
    "survival",
    "synthetic_stream",
    "validate_schedule",
    "worst_first_stream",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.submodular_streaming.adversarial": (
            "burst_stream",
            "duplicates_stream",
            "worst_first_stream",
        ),
        "optiforge.algorithms.submodular_streaming.coverage": (
            "Coverage",
            "expected_coverage",
            "marginal_gains",
            "survival",
        ),
        "optiforge.algorithms.submodular_streaming.exact": ("brute_force_optimum",),
        "optiforge.algorithms.submodular_streaming.known_visits": ("KnownVisitsSwap",),
        "optiforge.algorithms.submodular_streaming.linear_memory": ("LinearMemoryGreedy",),
        "optiforge.algorithms.submodular_streaming.offline": ("offline_greedy",),
        "optiforge.algorithms.submodular_streaming.on_demand": (
            "OnDemandStreaming",
            "proved_ratio",
        ),
        "optiforge.algorithms.submodular_streaming.protocol": (
            "RunResult",
            "StreamingRecommender",
            "run",
            "validate_schedule",
        ),
        "optiforge.algorithms.submodular_streaming.sieve": ("SieveStreaming",),
        "optiforge.algorithms.submodular_streaming.stream": ("Stream", "synthetic_stream"),
        "optiforge.algorithms.submodular_streaming.swap": ("SwapStreaming",),
        "optiforge.algorithms.submodular_streaming.swap_pool": ("SwapPoolStreaming",),
        "optiforge.algorithms.submodular_streaming.text_stream": ("shakespeare_stream",),
    },
)
