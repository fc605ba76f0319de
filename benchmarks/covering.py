"""Optimal covering with n balls: the smoothed zeroth-order method with restarts against the best
known radii (unit square n = 1..10, unit disk n = 3..7), Gonzalez's farthest-point k-center,
and Nelder-Mead at equal evaluations of the exact covering radius; covers of the L-shape,
annulus and comb have no published optimum and are compared between methods only.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run covering [--publish]

writes covering.{json,md} and covering_*.png (published: benchmarks/results, docs/figures).
Every radius is the exact one (candidate enumeration, algorithms/covering/radius.py).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from optiforge.algorithms.covering import (
    KNOWN_RADII,
    Cover,
    Region,
    SmoothedZerothOrder,
    gonzalez_cover,
    named,
    nelder_mead_cover,
    restarts_needed,
    smoothed_cover,
)
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table

CASES = [("square", n) for n in range(1, 11)] + [("disk", n) for n in range(3, 8)]
OTHER = [(name, n) for name in ("L-shape", "annulus", "comb") for n in (3, 5, 7)]


def known_row(name: str, n: int, args: Config) -> tuple[dict, Cover]:
    """Smoothed method and Gonzalez on one set with a known optimum (or None)."""
    region = named(name)
    known = KNOWN_RADII.get(name, {}).get(n)
    began = time.perf_counter()
    method = SmoothedZerothOrder(steps=args.steps, samples=args.samples)
    cover = smoothed_cover(region, n, restarts=args.restarts, method=method, seed=args.seed)
    seconds = time.perf_counter() - began
    gonzalez = gonzalez_cover(region, n, step=args.grid, restarts=args.restarts, seed=args.seed)
    row = {
        "set": name,
        "n": n,
        "known": known,
        "smoothed": cover.radius,
        "gonzalez": gonzalez.radius,
        "evaluations": cover.evaluations,
        "seconds": seconds,
        "centres": cover.centres.tolist(),
    }
    if known is not None:
        target = 1.01 * known
        row["gap_pct"] = 100 * (cover.radius / known - 1)
        row["gonzalez_gap_pct"] = 100 * (gonzalez.radius / known - 1)
        row["success_rate"] = float((cover.restart_radii <= target).double().mean())
        row["restarts_needed"] = restarts_needed(cover.restart_radii, target)
    return row, cover


def equal_budget_row(name: str, n: int, args: Config) -> dict:
    """Smoothed method vs Nelder-Mead, both given the same number of evaluations of r."""
    region = named(name)
    method = SmoothedZerothOrder(steps=args.budget_steps, samples=args.samples)
    cover = smoothed_cover(region, n, restarts=args.budget_restarts, method=method, seed=args.seed)
    nelder = nelder_mead_cover(region, n, evaluations=cover.evaluations, seed=args.seed)
    known = KNOWN_RADII[name][n]
    return {
        "set": name,
        "n": n,
        "evaluations": cover.evaluations,
        "smoothed_gap_pct": 100 * (cover.radius / known - 1),
        "nelder_mead_gap_pct": 100 * (nelder.radius / known - 1),
        "nelder_mead_evaluations": nelder.evaluations,
        "nelder_mead_runs": len(nelder.restart_radii),
    }


KNOWN_COLUMNS = [
    Column("set", "set"),
    Column("n", "n"),
    Column("known r", "known", ".6f"),
    Column("smoothed r", "smoothed", ".6f"),
    Column("gap %", "gap_pct", "+.3f"),
    Column("restarts within 1 %", "success_rate", ".2f"),
    Column("restarts needed", "restarts_needed"),
    Column("Gonzalez r", "gonzalez", ".4f"),
    Column("Gonzalez gap %", "gonzalez_gap_pct", "+.1f"),
    Column("s", "seconds", ".1f"),
]
OTHER_COLUMNS = [
    Column("set", "set"),
    Column("n", "n"),
    Column("smoothed r", "smoothed", ".5f"),
    Column("Gonzalez r", "gonzalez", ".5f"),
    Column("Gonzalez / smoothed", lambda r: r["gonzalez"] / r["smoothed"], ".3f"),
]
BUDGET_COLUMNS = [
    Column("set", "set"),
    Column("n", "n"),
    Column("evaluations", "evaluations"),
    Column("smoothed gap %", "smoothed_gap_pct", "+.3f"),
    Column("Nelder-Mead gap %", "nelder_mead_gap_pct", "+.3f"),
    Column("Nelder-Mead runs", "nelder_mead_runs"),
]


def draw(covers: list[tuple[Region, Cover]], path: Path) -> Path:
    """One panel per cover: the set's outline, the balls, their centres."""
    columns = 5
    rows = -(-len(covers) // columns)
    figure = new_figure(columns, rows, width=3.0, height=3.0)
    axes = figure.axes
    for ax, (region, cover) in zip(axes, covers, strict=False):
        for start, end in region.segments.tolist():
            ax.plot([start[0], end[0]], [start[1], end[1]], color="black", lw=1)
        for x, y, radius in region.circles.tolist():
            ax.add_patch(_circle((x, y), radius, "black", fill=False))
        for x, y in cover.centres.tolist():
            ax.add_patch(_circle((x, y), cover.radius, "tab:blue", fill=True))
        ax.plot(*cover.centres.T.tolist(), "k.", ms=3)
        ax.set_title(f"{region.name} n={cover.centres.shape[0]} r={cover.radius:.4f}", fontsize=8)
        ax.set_aspect("equal")
        ax.axis("off")
    for ax in axes[len(covers) :]:
        ax.axis("off")
    return save(figure, path)


def _circle(centre: tuple[float, float], radius: float, color: str, fill: bool) -> object:
    """A matplotlib circle patch (translucent when filled)."""
    from matplotlib.patches import Circle

    return Circle(centre, radius, color=color, fill=fill, alpha=0.25 if fill else 1.0, lw=1)


@dataclass(frozen=True)
class Config:
    """Restarts x steps x (samples + 1) evaluations per cover; Gonzalez on a `grid` cloud;
    the equal-evaluation comparison with its own restarts and steps."""

    restarts: int = 32
    steps: int = 2000
    samples: int = 8
    grid: float = 0.01
    budget_restarts: int = 2
    budget_steps: int = 1000
    seed: int = 0


def run(run: Run, args: Config) -> None:
    """Run the three comparisons, write the tables, draw the covers."""
    torch.set_num_threads(1)
    known_rows, other_rows, budget_rows, covers = [], [], [], []
    for name, n in CASES + OTHER:
        row, cover = known_row(name, n, args)
        (known_rows if row["known"] is not None else other_rows).append(row)
        covers.append((named(name), cover))
        run.log(f"{name} n={n} r={row['smoothed']:.5f} ({row['seconds']:.1f} s)")
    for name, n in CASES:
        budget_rows.append(equal_budget_row(name, n, args))
    text = (
        f"## Known optima ({args.restarts} restarts x {args.steps} steps x "
        f"({args.samples} + 1) evaluations, seed {args.seed})\n\n"
        f"{markdown_table(known_rows, KNOWN_COLUMNS)}\n\n"
        f"## Sets without a published optimum\n\n{markdown_table(other_rows, OTHER_COLUMNS)}\n\n"
        f"## Equal evaluations: {args.budget_restarts} restarts x {args.budget_steps} steps "
        f"vs Nelder-Mead restarted until the same budget is spent\n\n"
        f"{markdown_table(budget_rows, BUDGET_COLUMNS)}\n"
    )
    payload = {"known": known_rows, "other": other_rows, "equal_budget": budget_rows}
    run.write("covering", {"args": asdict(args), **payload}, text)
    draw(covers[:10], run.figure("covering_square.png"))
    draw(covers[10:15], run.figure("covering_disk.png"))
    draw(covers[15:], run.figure("covering_other_sets.png"))


BENCHMARK = Benchmark(
    "covering",
    run,
    Config,
    smoke=dict(restarts=2, steps=10, samples=2, grid=0.05, budget_restarts=1, budget_steps=10),
)

if __name__ == "__main__":
    BENCHMARK.main()
