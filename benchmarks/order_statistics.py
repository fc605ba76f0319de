"""Extreme order statistics of finite-mean heavy tails: the growth of E[X_(l)] and of max/second.

Reproduces, per family, the claims of "Tight Asymptotics of Extreme Order Statistics" (Correa,
Mallmann-Trenn, Romero): E[X_(1)] / n -> 0; for l >= 2, E[X_(l)] grows at most like
n / (log n log log n), reached up to (log log n)^delta by the near-extremal tail
c / (x log x (log log x)^(1 + delta)); the ratio of means E[X_(1)] / E[X_(2)] grows while the
quantiles of X_(1) / X_(2) over trials stay put. E[X_(l)] is exact (numerical integration) on
n = 10 .. 10^12; the Monte Carlo (exponential spacings, memory O(trials l)) runs n = 10^2 .. 10^7
with `--trials` trials and is checked against the exact means.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run order_statistics

writes order_statistics_growth.{json,md} and order_statistics_<family>.png.
"""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optiforge.algorithms.order_statistics import (
    Exponential,
    NearExtremal,
    Pareto,
    TailFamily,
    expected_order_statistic,
    summarize_top,
)
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table

FAMILIES: dict[str, TailFamily] = {
    "exponential": Exponential(),
    "pareto_1.5": Pareto(1.5),
    "pareto_1.01": Pareto(1.01),
    "near_extremal_0.5": NearExtremal(0.5),
    "near_extremal_0.01": NearExtremal(0.01),
}
EXACT_SIZES = [int(round(10**e)) for e in np.arange(1.0, 12.01, 0.5)]
MC_SIZES = [10**e for e in range(2, 8)]
QUANTILES = (0.5, 0.9, 0.99)


def paper_scale(n: int) -> float:
    """n / (log n log log n): the largest growth of E[X_(l)], l >= 2, for finite-mean tails."""
    return n / (math.log(n) * math.log(math.log(n)))


def exact_rows(family: TailFamily) -> list[dict[str, float]]:
    """E[X_(l)], l = 1, 2, 3, and their scaled forms on EXACT_SIZES."""
    rows = []
    for n in EXACT_SIZES:
        means = [expected_order_statistic(family, n, rank) for rank in (1, 2, 3)]
        rows.append(
            {
                "n": n,
                "mean_1": means[0],
                "mean_2": means[1],
                "mean_3": means[2],
                "max_over_n": means[0] / n,
                "second_over_scale": means[1] / paper_scale(n),
                "third_over_scale": means[2] / paper_scale(n),
                "ratio_of_means": means[0] / means[1],
            }
        )
    return rows


def monte_carlo_rows(family: TailFamily, trials: int, seed: int) -> list[dict[str, float]]:
    """Monte Carlo X_(1..3) on MC_SIZES: X_(2) mean vs exact, X_(1)/X_(2) quantiles and mean."""
    rows = []
    for n in MC_SIZES:
        summary = summarize_top(family, n, 3, trials, seed + n, QUANTILES)
        exact = expected_order_statistic(family, n, 2)
        rows.append(
            {
                "n": n,
                "mc_mean_2": float(summary.mean[1]),
                "mc_stderr_2": float(summary.stderr[1]),
                "exact_mean_2": exact,
                "z_2": float((summary.mean[1] - exact) / summary.stderr[1]),
                "ratio_mean": summary.ratio_mean,
                **{f"ratio_q{round(100 * q)}": v for q, v in summary.ratio_quantiles.items()},
            }
        )
    return rows


def draw(name: str, family: TailFamily, exact: list[dict], mc: list[dict], path: Path) -> Path:
    """Panels: E[X_(1)]/n; E[X_(l)] over n/(log n log log n); X_(1)/X_(2) mean vs quantiles."""
    figure = new_figure(3, width=5.0, height=4.0)
    left, middle, right = figure.axes
    n = [row["n"] for row in exact]
    left.semilogx(n, [row["max_over_n"] for row in exact], "o-", ms=3)
    left.set(xlabel="n", ylabel="E[X_(1)] / n", title=f"{family.name}: max / n")
    middle.semilogx(n, [row["second_over_scale"] for row in exact], "o-", ms=3, label="l = 2")
    middle.semilogx(n, [row["third_over_scale"] for row in exact], "s-", ms=3, label="l = 3")
    middle.errorbar(
        [row["n"] for row in mc],
        [row["mc_mean_2"] / paper_scale(row["n"]) for row in mc],
        yerr=[2 * row["mc_stderr_2"] / paper_scale(row["n"]) for row in mc],
        fmt="k.",
        label="l = 2, Monte Carlo",
    )
    middle.set(xlabel="n", ylabel="E[X_(l)] log n log log n / n", title="l-th largest")
    middle.legend()
    mc_n = [row["n"] for row in mc]
    for q in QUANTILES:
        key = f"ratio_q{round(100 * q)}"
        right.loglog(mc_n, [row[key] for row in mc], "o--", ms=3, label=f"{key[-2:]}% quantile")
    right.loglog(mc_n, [row["ratio_mean"] for row in mc], "ks-", ms=4, label="mean (Monte Carlo)")
    right.loglog(n, [row["ratio_of_means"] for row in exact], "r-", label="E[X_(1)] / E[X_(2)]")
    right.set(xlabel="n", ylabel="X_(1) / X_(2)", title="max / second max")
    right.legend(fontsize=8)
    return save(figure, path)


COLUMNS = [
    Column("n", lambda r: f"1e{round(math.log10(r['n']))}"),
    Column("E[X_(1)]", "mean_1", ".4g"),
    Column("E[X_(1)]/n", "max_over_n", ".4g"),
    Column("E[X_(2)]", "mean_2", ".4g"),
    Column("E[X_(2)] log n loglog n / n", "second_over_scale", ".4g"),
    Column("E[X_(1)]/E[X_(2)]", "ratio_of_means", ".3g"),
    Column(
        "MC E[X_(2)] (z)",
        lambda r: r.get("mc_mean_2") and f"{r['mc_mean_2']:.4g} ({r['z_2']:+.1f})",
    ),
    Column("X1/X2 q50", "ratio_q50", ".3g"),
    Column("q90", "ratio_q90", ".3g"),
    Column("q99", "ratio_q99", ".3g"),
    Column("MC mean X1/X2", "ratio_mean", ".3g"),
]


def markdown(results: dict) -> str:
    """A table per family: exact growth on powers of ten, with the Monte Carlo columns."""
    lines = [f"# Extreme order statistics ({results['trials']} Monte Carlo trials per n)", ""]
    for block in results["families"].values():
        mc = {row["n"]: row for row in block["monte_carlo"]}
        rows = [
            {**mc.get(row["n"], {}), **row}
            for row in block["exact"]
            if not math.log10(row["n"]) % 1
        ]
        lines += [f"## {block['family']}", "", markdown_table(rows, COLUMNS), ""]
    lines.append(f"Wall time {results['seconds']:.1f} s, peak memory {results['peak_mb']:.0f} MB.")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    trials: int = 10_000
    seed: int = 0


def main(run: Run, args: Config) -> None:
    """Run every family, write JSON + markdown, draw one figure per family."""
    start = time.perf_counter()
    results: dict = {"trials": args.trials, "seed": args.seed, "families": {}}
    for name, family in FAMILIES.items():
        exact = exact_rows(family)
        mc = monte_carlo_rows(family, args.trials, args.seed)
        results["families"][name] = {"family": family.name, "exact": exact, "monte_carlo": mc}
        draw(name, family, exact, mc, run.figure(f"order_statistics_{name}.png"))
        run.log(f"{family.name}: done")
    results["seconds"] = time.perf_counter() - start
    results["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    run.write("order_statistics_growth", results, markdown(results))


BENCHMARK = Benchmark("order_statistics", main, Config, smoke=dict(trials=20))

if __name__ == "__main__":
    BENCHMARK.main()
