"""Optimal covering with n balls: the smoothed zeroth-order method with restarts against the best
known radii (unit square n = 1..10, unit disk n = 3..7), Gonzalez's farthest-point k-center,
and Nelder-Mead at equal evaluations of the exact covering radius; covers of the L-shape,
annulus and comb have no published optimum and are compared between methods only.

    OMP_NUM_THREADS=1 python -m benchmarks.covering

writes benchmarks/results/covering.{json,md} and docs/figures/covering_*.png. Every radius is
the exact one (candidate enumeration, algorithms/covering/radius.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from benchmarks.figures import RESULTS, figure_dir, new_figure, save
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

CASES = [("square", n) for n in range(1, 11)] + [("disk", n) for n in range(3, 8)]
OTHER = [(name, n) for name in ("L-shape", "annulus", "comb") for n in (3, 5, 7)]


def known_row(name: str, n: int, args: argparse.Namespace) -> tuple[dict, Cover]:
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


def equal_budget_row(name: str, n: int, args: argparse.Namespace) -> dict:
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


def known_table(rows: list[dict]) -> str:
    """Markdown table of the sets with a known optimum."""
    lines = [
        "| set | n | known r | smoothed r | gap % | restarts within 1 % | restarts needed "
        "| Gonzalez r | Gonzalez gap % | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['n']} | {r['known']:.6f} | {r['smoothed']:.6f} "
            f"| {r['gap_pct']:+.3f} | {r['success_rate']:.2f} | {r['restarts_needed']} "
            f"| {r['gonzalez']:.4f} | {r['gonzalez_gap_pct']:+.1f} | {r['seconds']:.1f} |"
        )
    return "\n".join(lines)


def other_table(rows: list[dict]) -> str:
    """Markdown table of the sets without a published optimum."""
    lines = ["| set | n | smoothed r | Gonzalez r | Gonzalez / smoothed |", "|---|---|---|---|---|"]
    for r in rows:
        ratio = r["gonzalez"] / r["smoothed"]
        lines.append(
            f"| {r['set']} | {r['n']} | {r['smoothed']:.5f} | {r['gonzalez']:.5f} | {ratio:.3f} |"
        )
    return "\n".join(lines)


def budget_table(rows: list[dict]) -> str:
    """Markdown table of the equal-evaluation comparison."""
    lines = [
        "| set | n | evaluations | smoothed gap % | Nelder-Mead gap % | Nelder-Mead runs |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['n']} | {r['evaluations']} | {r['smoothed_gap_pct']:+.3f} "
            f"| {r['nelder_mead_gap_pct']:+.3f} | {r['nelder_mead_runs']} |"
        )
    return "\n".join(lines)


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


def main(argv: list[str] | None = None) -> None:
    """Run the three comparisons, print and write the tables, draw the covers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=32)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--grid", type=float, default=0.01, help="Gonzalez cloud spacing")
    parser.add_argument("--budget-restarts", type=int, default=2)
    parser.add_argument("--budget-steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    known_rows, other_rows, budget_rows, covers = [], [], [], []
    for name, n in CASES + OTHER:
        row, cover = known_row(name, n, args)
        (known_rows if row["known"] is not None else other_rows).append(row)
        covers.append((named(name), cover))
        print(f"{name} n={n} r={row['smoothed']:.5f} ({row['seconds']:.1f} s)", file=sys.stderr)
    for name, n in CASES:
        budget_rows.append(equal_budget_row(name, n, args))
        print(f"equal budget {name} n={n} done", file=sys.stderr)
    text = (
        f"## Known optima ({args.restarts} restarts x {args.steps} steps x "
        f"({args.samples} + 1) evaluations, seed {args.seed})\n\n{known_table(known_rows)}\n\n"
        f"## Sets without a published optimum\n\n{other_table(other_rows)}\n\n"
        f"## Equal evaluations: {args.budget_restarts} restarts x {args.budget_steps} steps "
        f"vs Nelder-Mead restarted until the same budget is spent\n\n{budget_table(budget_rows)}\n"
    )
    print(text)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "covering.md").write_text(text)
    record = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "known": known_rows,
        "other": other_rows,
        "equal_budget": budget_rows,
    }
    (args.output_dir / "covering.json").write_text(json.dumps(record, indent=1))
    out = figure_dir(args.output_dir)
    for path in (
        draw(covers[:10], out / "covering_square.png"),
        draw(covers[10:15], out / "covering_disk.png"),
        draw(covers[15:], out / "covering_other_sets.png"),
    ):
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
