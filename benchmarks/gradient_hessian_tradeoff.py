"""Gradient vs Hessian queries to reach ‖∇f‖ <= ε: Hessian-reuse AGD swept over n_H, against
gradient descent, restarted AGD (n_H = 0) and cubic-regularized Newton.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run gradient_hessian_tradeoff

Problems: Carmon et al.'s chain (T = 20), chained Rosenbrock (d = 10 and 100), a 64-8-10 tanh
MLP's full-batch loss on 300 digits (d = 610). For each n_H the schedule
`reuse_schedule(n_H, D, L₂, L₁)` sets r = D/n_H and δ = min(L₂ r, L₁/2); φ's floor is the
paper's 32 and 1. Writes gradient_hessian_tradeoff.{json,md} and the figure
gradient_hessian_tradeoff.png (docs/figures for the default output directory).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.nonconvex_functions import (
    carmon_chain,
    digits_mlp_loss,
    rosenbrock,
    rosenbrock_start,
)
from optiforge.optimizers.critical_or_progress import PAPER_FLOOR, reuse_schedule
from optiforge.optimizers.critical_point_baselines import cubic_newton, gradient_descent
from optiforge.optimizers.hessian_reuse_agd import CriticalPointResult, hessian_reuse_agd

BUDGETS = (0, 1, 2, 4, 8, 16, 32)
FLOORS = (PAPER_FLOOR, 1.0)


def problems() -> list[dict]:
    """Name, f, x0, ε, L₁, L₂ (the schedule's and cubic Newton's M) and travel D per problem."""
    mlp, mlp_x0 = digits_mlp_loss(hidden=8, samples=300, seed=0)
    ones = torch.ones(100, dtype=torch.float64)
    return [
        {"name": "chain T=20", "f": carmon_chain, "x0": torch.zeros(20, dtype=torch.float64),
         "eps": 0.5, "L1": 152.0, "L2": 100.0, "travel": math.sqrt(20.0)},
        {"name": "Rosenbrock d=10", "f": rosenbrock, "x0": rosenbrock_start(10), "eps": 1e-4,
         "L1": 2500.0, "L2": 100.0, "travel": float((rosenbrock_start(10) - ones[:10]).norm())},
        {"name": "Rosenbrock d=100", "f": rosenbrock, "x0": rosenbrock_start(100), "eps": 1e-4,
         "L1": 2500.0, "L2": 100.0, "travel": float((rosenbrock_start(100) - ones).norm())},
        {"name": "digits MLP d=610", "f": mlp, "x0": mlp_x0, "eps": 1e-3, "L1": 20.0,
         "L2": 10.0, "travel": 5.0},
    ]  # fmt: skip


def record(method: str, floor: float | None, n_h: int | None, result: CriticalPointResult,
           seconds: float) -> dict:  # fmt: skip
    """One row: oracle counts, whether ε was reached, final ‖∇f‖, wall time."""
    return {
        "method": method, "floor": floor, "n_H": n_h, "converged": result.converged,
        "gradient_calls": result.counts.gradient, "hessian_calls": result.counts.hessian,
        "final_grad_norm": result.grad_norms[-1], "seconds": round(seconds, 2),
    }  # fmt: skip


def timed(run: Callable[[], CriticalPointResult]) -> tuple[CriticalPointResult, float]:
    """Run a solver, return its result and the wall time in seconds."""
    start = time.perf_counter()
    result = run()
    return result, time.perf_counter() - start


def sweep(problem: dict, budget: int) -> list[dict]:
    """Every method on one problem, with `budget` gradient queries at most."""
    f, x0, eps, l1, l2 = (problem[key] for key in ("f", "x0", "eps", "L1", "L2"))
    rows = []
    for floor in FLOORS:
        for n_h in BUDGETS:
            if n_h == 0 and floor != PAPER_FLOOR:
                continue  # n_H = 0 is restarted AGD whatever the floor
            delta, radius = reuse_schedule(n_h, problem["travel"], l2, l1)
            result, seconds = timed(
                partial(
                    hessian_reuse_agd, f, x0, eps=eps, n_hessian=n_h, lipschitz=l1, delta=delta,
                    refresh_distance=radius, floor=floor, max_gradient_calls=budget,
                )
            )  # fmt: skip
            method = "restarted AGD" if n_h == 0 else "Hessian-reuse AGD"
            rows.append(record(method, None if n_h == 0 else floor, n_h, result, seconds))
            print(problem["name"], rows[-1], flush=True)
    result, seconds = timed(
        lambda: gradient_descent(f, x0, eps=eps, lipschitz=l1, max_gradient_calls=budget)
    )
    rows.append(record("gradient descent", None, 0, result, seconds))
    result, seconds = timed(
        lambda: cubic_newton(f, x0, eps=eps, hessian_lipschitz=l2, max_iterations=300)
    )
    rows.append(record("cubic Newton", None, None, result, seconds))
    print(problem["name"], rows[-2], rows[-1], sep="\n", flush=True)
    return rows


def sensitivity(budget: int) -> list[dict]:
    """Rosenbrock at the largest budgets (floor 1) with the schedule's L₂ in {100, 300, 1000}:
    does a larger δ = L₂ r rescue the runs that fail at L₂ = 100?"""
    rows = []
    for d, budgets in ((10, (8, 16, 32)), (100, (8, 16, 32))):
        x0 = rosenbrock_start(d)
        travel = float((x0 - 1.0).norm())
        for n_h in budgets:
            for l2 in (100.0, 300.0, 1000.0):
                delta, radius = reuse_schedule(n_h, travel, l2, 2500.0)
                result = hessian_reuse_agd(
                    rosenbrock, x0, eps=1e-4, n_hessian=n_h, lipschitz=2500.0, delta=delta,
                    refresh_distance=radius, floor=1.0, max_gradient_calls=budget,
                )  # fmt: skip
                rows.append({"d": d, "n_H": n_h, "L2": l2, "delta": delta,
                             "converged": result.converged,
                             "gradient_calls": result.counts.gradient})  # fmt: skip
                print("sensitivity", rows[-1], flush=True)
    return rows


def slope(rows: list[dict], floor: float) -> float | None:
    """Least-squares slope of log(gradient calls) vs log(n_H) over converged runs, n_H >= 1."""
    points = [
        (math.log(row["n_H"]), math.log(row["gradient_calls"]))
        for row in rows
        if row["method"] == "Hessian-reuse AGD" and row["floor"] == floor and row["converged"]
    ]
    if len(points) < 2:
        return None
    x, y = np.array(points).T
    return float(np.polyfit(x, y, 1)[0])


def paper_floor_sentence(results: dict[str, list[dict]], short: bool = False) -> str:
    """What φ's paper floor 32 does against restarted AGD, computed from the result rows (the
    JSON's "results"): the docs and the README quote this sentence (`short` for the README),
    and a test checks that they still match the published JSON."""
    runs, wins, ratios = 0, [], []
    for name, rows in results.items():
        agd = next(r["gradient_calls"] for r in rows if r["method"] == "restarted AGD")
        for r in rows:
            if r["method"] != "Hessian-reuse AGD" or r["floor"] != PAPER_FLOOR:
                continue
            runs += 1
            if r["converged"] and r["gradient_calls"] < agd:
                wins.append(f"{name} at n_H = {r['n_H']} ({r['gradient_calls']} against {agd})")
            elif r["converged"]:
                ratios.append(r["gradient_calls"] / agd)
    reached = len(wins) + len(ratios)
    where = f": {'; '.join(wins)}" if wins else ""
    count = f"fewer gradient queries than restarted AGD in {len(wins)} of"
    if short:
        return f"with the paper's floor 32, {count} {runs} runs{where}"
    rest = ""
    if ratios:
        rest = f"; the other {len(ratios)} that reach ε need {min(ratios):.1f}-"
        rest += f"{max(ratios):.0f}x AGD's count"
    return (
        f"With the paper's floor 32 the method reaches ε in {reached} of {runs} runs and needs "
        f"{count} them{where}{rest}."
    )


def plot(results: dict, path: Path) -> None:
    """Gradient calls vs n_H per problem, the n_H^{-1/2} bound shape through the n_H = 1 run."""
    figure = new_figure(len(results), width=4.5, height=4.0)
    for axis, (name, rows) in zip(figure.axes, results.items(), strict=True):
        for floor, marker in zip(FLOORS, ("o", "s"), strict=True):
            runs = [r for r in rows if r["method"] == "Hessian-reuse AGD" and r["floor"] == floor]
            axis.plot([r["n_H"] for r in runs], [r["gradient_calls"] for r in runs],
                      marker=marker, label=f"Hessian-reuse AGD, floor {floor:g}")  # fmt: skip
            for r in runs:
                if not r["converged"]:
                    axis.plot(r["n_H"], r["gradient_calls"], "x", color="red", markersize=10)
            if floor != PAPER_FLOOR:  # the bound's shape through the floor-1 run at n_H = 1
                grid = np.array(BUDGETS[1:], dtype=float)
                axis.plot(grid, runs[0]["gradient_calls"] * grid**-0.5, "k--",
                          label="bound shape ∝ n_H^(-1/2)")  # fmt: skip
        for method, style in (("restarted AGD", "g:"), ("gradient descent", "m-.")):
            calls = next(r["gradient_calls"] for r in rows if r["method"] == method)
            axis.axhline(calls, linestyle=style[1:], color=style[0], label=method)
        newton = next(r for r in rows if r["method"] == "cubic Newton")
        axis.plot(newton["hessian_calls"], newton["gradient_calls"], "k*", markersize=12,
                  label="cubic Newton (x: its Hessian calls)")  # fmt: skip
        axis.set(xscale="log", yscale="log", xlabel="Hessian queries n_H",
                 ylabel="gradient queries to ‖∇f‖ ≤ ε", title=name)  # fmt: skip
    figure.axes[0].legend(fontsize=7)
    save(figure, path)


def markdown(results: dict, slopes: dict, robustness: list[dict]) -> str:
    """The results as markdown tables, one per problem, with the fitted slopes."""
    lines = ["# Gradient vs Hessian queries to reach ‖∇f‖ <= ε", ""]
    lines.append(
        "Command: `OMP_NUM_THREADS=1 python -m optiforge.benchmarks run gradient_hessian_tradeoff`"
    )
    for name, rows in results.items():
        lines += ["", f"## {name}", ""]
        lines.append(
            "| method | floor | n_H | reached ε | gradient calls | Hessian calls | final ‖∇f‖ |"
        )
        lines.append("|---|---|---:|---|---:|---:|---:|")
        for r in rows:
            floor = "" if r["floor"] is None else f"{r['floor']:g}"
            n_h = "" if r["n_H"] is None else r["n_H"]
            lines.append(
                f"| {r['method']} | {floor} | {n_h} | {'yes' if r['converged'] else 'no'} | "
                f"{r['gradient_calls']} | {r['hessian_calls']} | {r['final_grad_norm']:.2e} |"
            )
        fitted = ", ".join(
            f"floor {floor:g}: {'n/a' if s is None else f'{s:.2f}'}"
            for floor, s in slopes[name].items()
        )
        lines += ["", f"Fitted slope of log(gradient calls) vs log(n_H), n_H >= 1: {fitted} "
                  "(the bound's exponent is -0.5)."]  # fmt: skip
    lines += ["", "## Rosenbrock, floor 1: the schedule's L₂ (so δ = L₂ r)", ""]
    lines += ["| d | n_H | L₂ | δ | reached ε | gradient calls |", "|---:|---:|---:|---:|---|---:|"]
    for r in robustness:
        lines.append(
            f"| {r['d']} | {r['n_H']} | {r['L2']:g} | {r['delta']:.3g} | "
            f"{'yes' if r['converged'] else 'no'} | {r['gradient_calls']} |"
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    max_gradient_calls: int = 20_000
    problems: tuple[str, ...] = (
        "chain T=20",
        "Rosenbrock d=10",
        "Rosenbrock d=100",
        "digits MLP d=610",
    )


def main(run: Run, args: Config) -> None:
    """Run the sweep on every problem, write the results and the figure."""
    torch.manual_seed(0)
    results, slopes, specs = {}, {}, {}
    for problem in problems():
        if problem["name"] not in args.problems:
            continue
        results[problem["name"]] = sweep(problem, args.max_gradient_calls)
        slopes[problem["name"]] = {f: slope(results[problem["name"]], f) for f in FLOORS}
        specs[problem["name"]] = {k: problem[k] for k in ("eps", "L1", "L2", "travel")}
        specs[problem["name"]]["d"] = int(problem["x0"].numel())
    robustness = sensitivity(args.max_gradient_calls)
    payload = {"problems": specs, "slopes": slopes, "results": results, "sensitivity": robustness,
               "max_gradient_calls": args.max_gradient_calls}  # fmt: skip
    run.write("gradient_hessian_tradeoff", payload, markdown(results, slopes, robustness))
    plot(results, run.figure("gradient_hessian_tradeoff.png"))


BENCHMARK = Benchmark(
    "gradient_hessian_tradeoff",
    main,
    Config,
    smoke=dict(max_gradient_calls=50, problems=("chain T=20", "Rosenbrock d=10")),
)

if __name__ == "__main__":
    BENCHMARK.main()
