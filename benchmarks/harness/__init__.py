"""The benchmark harness: one registry, one result record with provenance, one writer, one timer.

A benchmark module declares `BENCHMARK = Benchmark(name, run, Config, smoke={...})`; its `run`
takes a `Run` (where to write, the provenance) and the `Config` dataclass (the arguments, which
are the command line's schema).
`python -m optiforge.benchmarks run NAME [--preset smoke|paper] [--publish]` runs it; see
docs/benchmarks.md.
"""

from __future__ import annotations

from optiforge.benchmarks.harness.registry import Benchmark, Run
from optiforge.benchmarks.harness.report import Column, markdown_table, mean_std
from optiforge.benchmarks.harness.timing import Timing, interleaved, timeit

__all__ = [
    "Benchmark",
    "Column",
    "Run",
    "Timing",
    "interleaved",
    "markdown_table",
    "mean_std",
    "timeit",
]
