"""Streaming stochastic submodular recommendation with on-demand visits (Wang, Tu,
Oettershagen, Gionis): expected topic coverage, the bounded-memory on-demand recommender (our
reconstruction), the known-visits / linear-memory adaptations, swap and sieve streaming, offline
greedy and brute force as references, synthetic and Shakespeare streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from algorithms.submodular_streaming.coverage import (
        Coverage,
        expected_coverage,
        marginal_gains,
        survival,
    )
    from algorithms.submodular_streaming.exact import brute_force_optimum
    from algorithms.submodular_streaming.known_visits import KnownVisitsSwap
    from algorithms.submodular_streaming.linear_memory import LinearMemoryGreedy
    from algorithms.submodular_streaming.offline import offline_greedy
    from algorithms.submodular_streaming.on_demand import OnDemandStreaming
    from algorithms.submodular_streaming.protocol import (
        RunResult,
        StreamingRecommender,
        run,
        validate_schedule,
    )
    from algorithms.submodular_streaming.sieve import SieveStreaming
    from algorithms.submodular_streaming.stream import Stream, synthetic_stream
    from algorithms.submodular_streaming.swap import SwapStreaming
    from algorithms.submodular_streaming.text_stream import shakespeare_stream

__all__ = [
    "Coverage",
    "KnownVisitsSwap",
    "LinearMemoryGreedy",
    "OnDemandStreaming",
    "RunResult",
    "SieveStreaming",
    "Stream",
    "StreamingRecommender",
    "SwapStreaming",
    "brute_force_optimum",
    "expected_coverage",
    "marginal_gains",
    "offline_greedy",
    "run",
    "shakespeare_stream",
    "survival",
    "synthetic_stream",
    "validate_schedule",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "algorithms.submodular_streaming.coverage": (
            "Coverage",
            "expected_coverage",
            "marginal_gains",
            "survival",
        ),
        "algorithms.submodular_streaming.exact": ("brute_force_optimum",),
        "algorithms.submodular_streaming.known_visits": ("KnownVisitsSwap",),
        "algorithms.submodular_streaming.linear_memory": ("LinearMemoryGreedy",),
        "algorithms.submodular_streaming.offline": ("offline_greedy",),
        "algorithms.submodular_streaming.on_demand": ("OnDemandStreaming",),
        "algorithms.submodular_streaming.protocol": (
            "RunResult",
            "StreamingRecommender",
            "run",
            "validate_schedule",
        ),
        "algorithms.submodular_streaming.sieve": ("SieveStreaming",),
        "algorithms.submodular_streaming.stream": ("Stream", "synthetic_stream"),
        "algorithms.submodular_streaming.swap": ("SwapStreaming",),
        "algorithms.submodular_streaming.text_stream": ("shakespeare_stream",),
    },
)
