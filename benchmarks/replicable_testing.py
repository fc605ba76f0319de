"""Replicable testers vs the fixed-threshold tester vs scipy's chi-square tests.

For uniformity, closeness and independence at three (n, eps, rho) settings, each tester gets the
sample size of optiforge.algorithms.replicable_testing's bound; over `--pairs` pairs of runs (same
internal seed, fresh samples) on null, eps-far and mid-window instances (benchmarks/
replicable_testing_instances.py) it measures the replicability rate (both runs decide alike) with a
95% Clopper-Pearson interval, the rejection rate and the accuracy (null: accept, far: reject).

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run replicable_testing

writes replicable_testing.{json,md} and replicable_testing.png.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optiforge.algorithms.replicable_testing import (
    closeness_samples,
    independence_samples,
    uniformity_samples,
)
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.replicable_testing_instances import (
    Instance,
    closeness_instances,
    independence_instances,
    uniformity_instances,
)
from optiforge.benchmarks.replicable_testing_runs import METHODS, Setup, run_pairs, summarize

SETTINGS = ((100, 0.5, 0.2), (1000, 0.25, 0.2), (1000, 0.5, 0.1))
SHAPES = {100: (10, 10), 1000: (20, 50)}  # independence: n1 x n2 = n cells


def setups(n: int, eps: float, rho: float) -> list[tuple[Setup, list[Instance]]]:
    """Each tester kind at the bound's sample size, with its instances."""
    n1, n2 = SHAPES[n]
    m_u = uniformity_samples(n, eps, rho)
    m_c = closeness_samples(n, eps, rho)
    m_i = independence_samples(n1, n2, eps, rho) // 3
    return [
        (Setup("uniformity", m_u, eps), uniformity_instances(n, eps, m_u)),
        (Setup("closeness", m_c, eps), closeness_instances(n, eps, m_c)),
        (Setup("independence", m_i, eps, (n1, n2)), independence_instances(n1, n2, eps, m_i)),
    ]


def measure(pairs: int, seed: int) -> list[dict]:
    """One row per (setting, tester, instance, method)."""
    rows = []
    for index, (n, eps, rho) in enumerate(SETTINGS):
        for setup, instances in setups(n, eps, rho):
            samples = setup.m * (3 if setup.kind == "independence" else 1)
            for offset, instance in enumerate(instances):
                decisions = run_pairs(setup, instance, pairs, seed + 100 * index + offset)
                for method in METHODS:
                    rows.append(
                        {
                            "tester": setup.kind,
                            "n": n,
                            "eps": eps,
                            "rho": rho,
                            "samples": samples,
                            "instance": instance.name,
                            "tv": float(np.abs(instance.p - instance.q).sum() / 2),
                            "method": method,
                            **summarize(decisions[method], instance.name),
                        }
                    )
            print(f"{setup.kind} n={n} eps={eps} rho={rho}: done", file=sys.stderr)
    return rows


def markdown(rows: list[dict], pairs: int, seconds: float) -> str:
    """The rates table: replicability [95% CI] and accuracy / rejection rate per method."""
    lines = [
        f"# Replicable testers ({pairs} pairs of runs per cell, {seconds:.0f} s)",
        "",
        "Replicability: both runs of a pair decide alike (95% Clopper-Pearson interval). "
        "Accuracy: accept on null, reject on far; on mid, spike and chi2-mid the rejection rate.",
        "",
        "| tester | n | eps | rho | samples | instance | TV | replicable | fixed r = 1/2 "
        "| scipy chi2 (p < 0.05) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    keyed = {(r["tester"], r["n"], r["eps"], r["instance"], r["method"]): r for r in rows}
    for row in rows:
        if row["method"] != "replicable":
            continue
        cells = []
        for method in METHODS:
            r = keyed[(row["tester"], row["n"], row["eps"], row["instance"], method)]
            quality = r["accuracy"] if row["instance"] in ("null", "far") else r["reject_rate"]
            label = "acc" if row["instance"] in ("null", "far") else "rej"
            cells.append(
                f"{r['replicability']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}], "
                f"{label} {quality:.3f}"
            )
        lines.append(
            f"| {row['tester']} | {row['n']} | {row['eps']} | {row['rho']} | {row['samples']} | "
            f"{row['instance']} | {row['tv']:.3f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def draw(rows: list[dict], path: Path) -> Path:
    """Replicability rate (with interval) per instance and method, one panel per tester."""
    kinds = ("uniformity", "closeness", "independence")
    figure = new_figure(3, width=5.5, height=4.0)
    for axis, kind in zip(figure.axes, kinds, strict=True):
        mine = [r for r in rows if r["tester"] == kind]
        cells = sorted({(r["n"], r["eps"], r["rho"], r["instance"]) for r in mine}, key=str)
        x = np.arange(len(cells))
        for shift, method in zip((-0.25, 0.0, 0.25), METHODS, strict=True):
            keyed = {
                (r["n"], r["eps"], r["rho"], r["instance"]): r
                for r in mine
                if r["method"] == method
            }
            picked = [keyed[c] for c in cells]
            rate = np.array([r["replicability"] for r in picked])
            error = np.array(
                [
                    [r - p["ci_low"] for r, p in zip(rate, picked, strict=True)],
                    [p["ci_high"] - r for r, p in zip(rate, picked, strict=True)],
                ]
            )
            axis.errorbar(x + shift, rate, yerr=error, fmt="o", ms=3, label=method)
        for c, xi in zip(cells, x, strict=True):
            axis.plot([xi - 0.4, xi + 0.4], [1 - c[2]] * 2, "k:", lw=1)
        axis.set_xticks(
            x, [f"n={c[0]} eps={c[1]}\nrho={c[2]} {c[3]}" for c in cells], rotation=90, fontsize=6
        )
        axis.set(ylabel="replicability rate", title=f"{kind} (dotted: 1 - rho)", ylim=(0.4, 1.02))
        axis.legend(fontsize=7, loc="center right")
    return save(figure, path)


@dataclass(frozen=True)
class Config:
    pairs: int = 1000
    seed: int = 0


def main(run: Run, args: Config) -> None:
    """Measure every tester, write JSON + markdown and the figure."""
    start = time.perf_counter()
    rows = measure(args.pairs, args.seed)
    seconds = time.perf_counter() - start
    payload = {"pairs": args.pairs, "seed": args.seed, "seconds": seconds, "rows": rows}
    run.write("replicable_testing", payload, markdown(rows, args.pairs, seconds))
    draw(rows, run.figure("replicable_testing.png"))


BENCHMARK = Benchmark("replicable_testing", main, Config, smoke=dict(pairs=3))

if __name__ == "__main__":
    BENCHMARK.main()
