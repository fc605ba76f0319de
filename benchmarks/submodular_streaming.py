"""Streaming stochastic submodular recommendation: coverage, memory and time per item.

Every method replays the same streams (synthetic in random and in increasing-quality order, and
the tinyshakespeare speeches) and is scored by expected topic coverage relative to offline greedy
on the whole stream (known visit times, no memory limit). The bounded-memory methods are given
only an upper bound `--bound-ratio` x V on the number of visits V; the known-visits adaptation is
run once with the exact V and once with the bound. The on-demand recommender's measured ratio is
compared with the paper's 1 / (8 delta).

    OMP_NUM_THREADS=1 python -m benchmarks run submodular_streaming

writes submodular_streaming.{json,md} and docs/figures/submodular_*.png
(under two minutes on one core); `--lengths 5000 50000 500000` and more `--seeds` scale it up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from benchmarks.figures import new_figure, save
from benchmarks.harness import Benchmark, Run
from optiforge.algorithms.submodular_streaming import (
    KnownVisitsSwap,
    LinearMemoryGreedy,
    OnDemandStreaming,
    SieveStreaming,
    Stream,
    StreamingRecommender,
    SwapStreaming,
    offline_greedy,
    run,
    shakespeare_stream,
    synthetic_stream,
)
from optiforge.problems.data_paths import data_path

Factory = Callable[[int, int, int, int], StreamingRecommender]  # (k, topics, V, bound)


def methods(delta: float) -> dict[str, Factory]:
    """The compared methods by name, each built from (k, topics, visits V, visits bound)."""
    return {
        "on_demand": lambda k, m, v, b: OnDemandStreaming(k, m, b, delta),
        "known_visits_exact": lambda k, m, v, b: KnownVisitsSwap(k, m, v),
        "known_visits_bound": lambda k, m, v, b: KnownVisitsSwap(k, m, b),
        "linear_memory": lambda k, m, v, b: LinearMemoryGreedy(k, m),
        "swap": lambda k, m, v, b: SwapStreaming(k, m),
        "sieve": lambda k, m, v, b: SieveStreaming(k, m, b),
    }


def measure(stream: Stream, k: int, bound_ratio: float, delta: float) -> dict[str, dict]:
    """Coverage ratio to offline greedy, peak items held and microseconds per item, per method."""
    visits = len(stream.visits)
    bound = max(visits, int(np.ceil(bound_ratio * visits)))
    _, reference = offline_greedy(stream, k)
    rows = {"offline_greedy": {"coverage": reference, "ratio": 1.0, "memory": len(stream)}}
    for name, make in methods(delta).items():
        result = run(stream, make(k, stream.num_topics, visits, bound))
        rows[name] = {
            "coverage": result.coverage,
            "ratio": result.coverage / reference,
            "memory": result.peak_memory,
            "us_per_item": 1e6 * result.seconds_per_item,
        }
    return rows


def sweep(args: Config) -> list[dict]:
    """All (stream, length, visits, seed) cells."""
    cells = []
    text = shakespeare_stream(data_path("tinyshakespeare/input.txt"), args.topics, seed=0)
    for seed in range(args.seeds):
        for visits in args.visits:
            streams = {
                "synthetic": synthetic_stream(args.length, args.topics, visits, seed),
                "synthetic_increasing": synthetic_stream(
                    args.length, args.topics, visits, seed, increasing=True
                ),
                "shakespeare": text.with_visits(visits, seed),
            }
            for name, stream in streams.items():
                rows = measure(stream, args.k, args.bound_ratio, args.delta)
                cells.append(
                    {
                        "stream": name,
                        "n": len(stream),
                        "visits": visits,
                        "seed": seed,
                        "methods": rows,
                    }
                )
        for length in args.lengths:
            stream = synthetic_stream(length, args.topics, args.length_visits, seed)
            rows = measure(stream, args.k, args.bound_ratio, args.delta)
            cells.append(
                {
                    "stream": "synthetic_length",
                    "n": length,
                    "visits": args.length_visits,
                    "seed": seed,
                    "methods": rows,
                }
            )
        Run.log(f"seed {seed} done")
    return cells


def delta_sweep(args: Config) -> list[dict]:
    """on_demand's ratio to offline greedy per delta (synthetic, both orders, V = length_visits)."""
    rows = []
    for increasing in (False, True):
        for seed in range(args.seeds):
            stream = synthetic_stream(
                args.length, args.topics, args.length_visits, seed, increasing=increasing
            )
            _, reference = offline_greedy(stream, args.k)
            bound = int(np.ceil(args.bound_ratio * args.length_visits))
            for delta in args.deltas:
                result = run(stream, OnDemandStreaming(args.k, args.topics, bound, delta))
                rows.append(
                    {
                        "increasing": increasing,
                        "seed": seed,
                        "delta": delta,
                        "ratio": result.coverage / reference,
                        "memory": result.peak_memory,
                        "competitive_ratio": 1.0 / (8.0 * delta),
                    }
                )
    return rows


def delta_table(rows: list[dict]) -> str:
    """Mean and worst on_demand ratio per delta and order, next to 1 / (8 delta)."""
    lines = [
        "| delta | 1/(8 delta) | random order: mean / worst | increasing order: mean / worst |",
        "|---|---|---|---|",
    ]
    for delta in sorted({r["delta"] for r in rows}):
        cells = []
        for increasing in (False, True):
            ratios = [
                r["ratio"] for r in rows if r["delta"] == delta and r["increasing"] == increasing
            ]
            cells.append(f"{np.mean(ratios):.3f} / {min(ratios):.3f}")
        lines.append(f"| {delta:g} | {1 / (8 * delta):.4f} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def summary(cells: list[dict], stream: str, key: str) -> dict[str, dict[int, float]]:
    """method -> {visits or n: mean of `key` over seeds} for one stream kind."""
    axis = "n" if stream == "synthetic_length" else "visits"
    out: dict[str, dict[int, list[float]]] = {}
    for cell in (c for c in cells if c["stream"] == stream):
        for method, row in cell["methods"].items():
            if key in row:
                out.setdefault(method, {}).setdefault(cell[axis], []).append(row[key])
    return {m: {x: float(np.mean(v)) for x, v in sorted(d.items())} for m, d in out.items()}


def table(cells: list[dict], stream: str, key: str, fmt: str) -> str:
    """A markdown table of `key` (mean over seeds) with methods as rows."""
    data = summary(cells, stream, key)
    xs = sorted({x for row in data.values() for x in row})
    axis = "n" if stream == "synthetic_length" else "V"
    lines = [
        f"| method | {' | '.join(f'{axis} = {x}' for x in xs)} |",
        "|---" * (len(xs) + 1) + "|",
    ]
    for method, row in data.items():
        lines.append(f"| {method} | " + " | ".join(format(row[x], fmt) for x in xs) + " |")
    return "\n".join(lines)


def worst_ratio(cells: list[dict], method: str) -> float:
    """The smallest coverage ratio of `method` over every cell (every stream, every seed)."""
    return min(c["methods"][method]["ratio"] for c in cells)


def figures(cells: list[dict], out: Path) -> list[Path]:
    """Coverage ratio vs visits per stream, and memory / time vs stream length."""
    kinds = ["synthetic", "synthetic_increasing", "shakespeare"]
    figure = new_figure(len(kinds))
    for axes, kind in zip(figure.axes, kinds, strict=True):
        for method, row in summary(cells, kind, "ratio").items():
            style = "--" if method == "linear_memory" else "-"  # it overlays on_demand
            axes.plot(list(row), list(row.values()), style, marker="o", label=method)
        axes.set(title=kind, xlabel="visits V", ylabel="coverage / offline greedy", xscale="log")
        axes.set_xticks(list(row), [str(x) for x in row])
    figure.axes[0].legend(fontsize=8)
    paths = [save(figure, out / "submodular_coverage_vs_visits.png")]
    figure = new_figure(2)
    for axes, key, label in zip(
        figure.axes,
        ("memory", "us_per_item"),
        ("items held (peak)", "microseconds per item"),
        strict=True,
    ):
        for method, row in summary(cells, "synthetic_length", key).items():
            axes.plot(list(row), list(row.values()), marker="o", label=method)
        axes.set(xlabel="stream length n", ylabel=label, xscale="log", yscale="log")
    figure.axes[0].legend(fontsize=8)
    paths.append(save(figure, out / "submodular_memory_vs_length.png"))
    return paths


@dataclass(frozen=True)
class Config:
    k: int = 5
    topics: int = 50
    length: int = 5000
    visits: tuple[int, ...] = (20, 50, 100, 200)
    lengths: tuple[int, ...] = (5000, 15000, 50000)
    length_visits: int = 100
    bound_ratio: float = 2.0
    delta: float = 2.0
    deltas: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    seeds: int = 3


def main(run: Run, args: Config) -> None:
    """Run the sweep, write the tables, draw the figures."""
    cells = sweep(args)
    deltas = delta_sweep(args)
    worst = worst_ratio(cells, "on_demand")
    bound = 1.0 / (8.0 * args.delta)
    sections = [
        f"# Streaming submodular recommendation (k = {args.k}, {args.topics} topics, "
        f"bound = {args.bound_ratio} x V, delta = {args.delta}, {args.seeds} seeds)",
        f"on_demand worst ratio to offline greedy over all cells: {worst:.3f} "
        f"(paper's competitive ratio 1/(8 delta) = {bound:.4f})",
    ]
    for kind in ("synthetic", "synthetic_increasing", "shakespeare"):
        sections += [
            f"## {kind}: coverage / offline greedy",
            table(cells, kind, "ratio", ".3f"),
            f"## {kind}: peak items held",
            table(cells, kind, "memory", ".0f"),
        ]
    sections += [
        f"## stream length (V = {args.length_visits}): coverage / offline greedy",
        table(cells, "synthetic_length", "ratio", ".3f"),
        "## stream length: peak items held",
        table(cells, "synthetic_length", "memory", ".0f"),
        "## stream length: microseconds per item",
        table(cells, "synthetic_length", "us_per_item", ".1f"),
        f"## on_demand vs delta (n = {args.length}, V = {args.length_visits})",
        delta_table(deltas),
    ]
    record = {
        "args": asdict(args),
        "on_demand_worst_ratio": worst,
        "competitive_ratio": bound,
        "cells": cells,
    }
    run.write("submodular_streaming", record, "\n\n".join(sections))
    run.written += figures(cells, run.figure_dir)


BENCHMARK = Benchmark(
    "submodular_streaming",
    main,
    Config,
    smoke=dict(length=200, visits=(5,), lengths=(200,), length_visits=5, deltas=(2.0,), seeds=1),
)

if __name__ == "__main__":
    BENCHMARK.main()
