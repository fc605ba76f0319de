"""Samples the replicable testers need as n grows: the bound's formula and the measured minimum.

The formula (optiforge.algorithms.replicable_testing.sample_size) is drawn for n = 10 .. 10^9 at
(eps, rho) = (0.25, 0.2) on log-log axes, with reference lines of slope 1/2 (the sqrt(n) term)
and 2/3 (closeness's n^(2/3) term). The measured minimum at n = 10^2 .. 10^4 is the smallest m
on a grid m_bound 1.25^-k whose `--pairs` seeded pairs agree at rate >= 1 - rho on the null,
eps-far and mid-window instances while accepting the null and rejecting the far instance at
rate >= 2/3; its log-log slope is fitted.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run replicable_testing_samples

writes replicable_testing_samples.{json,md} and
docs/figures/replicable_testing_samples.png.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optiforge.algorithms.replicable_testing import (
    closeness_samples,
    independence_samples,
    uniformity_samples,
)
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.benchmarks.replicable_testing_instances import (
    Instance,
    closeness_instances,
    uniformity_instances,
)
from optiforge.benchmarks.replicable_testing_runs import Setup, run_pairs, summarize

EPS, RHO = 0.25, 0.2
FORMULA_SIZES = np.unique(np.round(np.logspace(1, 9, 33)).astype(int))
MEASURED_SIZES = (100, 300, 1000, 3000, 10000)
STEP = 1.25


def formula_rows() -> list[dict[str, float]]:
    """The bound's m(n) for each tester (independence: n1 = n2 = sqrt(n), joint samples)."""
    rows = []
    for n in FORMULA_SIZES:
        side = max(2, round(float(np.sqrt(n))))
        rows.append(
            {
                "n": int(n),
                "uniformity": uniformity_samples(int(n), EPS, RHO),
                "closeness": closeness_samples(int(n), EPS, RHO),
                "independence": independence_samples(side, side, EPS, RHO),
            }
        )
    return rows


def passes(kind: str, n: int, m: int, pairs: int, seed: int) -> bool:
    """Replicability >= 1 - rho on null, far and mid, accuracy >= 2/3 on null and far, at m."""
    build: Callable[[int, float, int], list[Instance]] = (
        uniformity_instances if kind == "uniformity" else closeness_instances
    )
    for offset, instance in enumerate(build(n, EPS, m)):
        if instance.name not in ("null", "far", "mid"):
            continue
        decisions = run_pairs(Setup(kind, m, EPS), instance, pairs, seed + offset, ("replicable",))
        summary = summarize(decisions["replicable"], instance.name)
        if summary["replicability"] < 1 - RHO:
            return False
        if instance.name != "mid" and summary["accuracy"] < 2 / 3:
            return False
    return True


def measured_minimum(kind: str, n: int, pairs: int, seed: int) -> int:
    """The smallest grid size m_bound STEP^-k that passes, scanning k up to the first failure."""
    bound = (uniformity_samples if kind == "uniformity" else closeness_samples)(n, EPS, RHO)
    best = bound
    for k in range(1, 40):
        m = int(bound * STEP**-k)
        if m < 4 or not passes(kind, n, m, pairs, seed + k):
            break
        best = m
    return best


def slope(n: list[int], m: list[int]) -> float:
    """Least-squares slope of log m against log n."""
    return float(np.polyfit(np.log(n), np.log(m), 1)[0])


def draw(formula: list[dict], measured: dict[str, list[int]], path: Path) -> Path:
    """Formula curves, measured minima and reference slopes on log-log axes."""
    figure = new_figure(1, width=7.0, height=5.0)
    axis = figure.axes[0]
    n = np.array([row["n"] for row in formula])
    for kind, style in (("uniformity", "C0"), ("closeness", "C1"), ("independence", "C2")):
        axis.loglog(n, [row[kind] for row in formula], "-", color=style, label=f"{kind}: bound")
        if kind in measured:
            axis.loglog(
                MEASURED_SIZES, measured[kind], "o", color=style, label=f"{kind}: measured minimum"
            )
    for power, anchor in ((0.5, "uniformity"), (2 / 3, "closeness")):
        top = formula[-1][anchor]
        axis.loglog(
            n,
            top * 2.0 * (n / n[-1]) ** power,
            "k--" if power == 0.5 else "k:",
            lw=1,
            label=f"slope {power:.2g}",
        )
    axis.set(
        xlabel="support size n (independence: n1 n2)",
        ylabel="samples",
        title=f"samples vs n at eps = {EPS}, rho = {RHO}",
    )
    axis.legend(fontsize=8)
    return save(figure, path)


@dataclass(frozen=True)
class Config:
    pairs: int = 200
    seed: int = 0


def main(run: Run, args: Config) -> None:
    """Formula curves, measured minima, slopes; JSON + markdown + figure."""
    start = time.perf_counter()
    formula = formula_rows()
    measured = {}
    for kind in ("uniformity", "closeness"):
        measured[kind] = [measured_minimum(kind, n, args.pairs, args.seed) for n in MEASURED_SIZES]
        run.log(f"{kind}: {measured[kind]}")
    big = [row for row in formula if row["n"] >= 10**7]
    slopes = {
        f"bound_{kind}_n>=1e7": slope([r["n"] for r in big], [r[kind] for r in big])
        for kind in ("uniformity", "closeness", "independence")
    }
    slopes |= {f"measured_{k}": slope(list(MEASURED_SIZES), v) for k, v in measured.items()}
    payload = {
        "eps": EPS,
        "rho": RHO,
        "pairs": args.pairs,
        "formula": formula,
        "measured_sizes": list(MEASURED_SIZES),
        "measured": measured,
        "slopes": slopes,
        "seconds": time.perf_counter() - start,
    }
    rows = [
        {"n": n, "uniformity": measured["uniformity"][i], "closeness": measured["closeness"][i]}
        for i, n in enumerate(MEASURED_SIZES)
    ]
    lines = [
        f"# Samples vs n (eps = {EPS}, rho = {RHO}, {args.pairs} pairs per check)",
        "",
        markdown_table(rows, COLUMNS),
        "",
        markdown_table(
            [{"key": k, "value": v} for k, v in slopes.items()],
            [Column("log-log slope", "key"), Column("value", "value", ".3f")],
        ),
        "",
        f"Wall time {payload['seconds']:.0f} s.",
    ]
    run.write("replicable_testing_samples", payload, "\n".join(lines))
    draw(formula, measured, run.figure("replicable_testing_samples.png"))


COLUMNS = [
    Column("n", "n"),
    Column("uniformity bound", lambda r: uniformity_samples(r["n"], EPS, RHO)),
    Column("measured", "uniformity"),
    Column("closeness bound", lambda r: closeness_samples(r["n"], EPS, RHO)),
    Column("measured", "closeness"),
]
BENCHMARK = Benchmark("replicable_testing_samples", main, Config, smoke=dict(pairs=2))

if __name__ == "__main__":
    BENCHMARK.main()
