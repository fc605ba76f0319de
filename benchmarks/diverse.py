"""DIVERSE vs GT-EG vs all-reduce OGDA on COMPAS robust regression, 2/4/8 nodes, two topologies.

Every method runs the same saddle problem (heterogeneous shards: rows sorted by target, node i
holds the i-th quantile range) from z = 0, in the one-process simulation, which the tests show
takes the steps of the gloo processes to 1e-8. Each method's step size is the one of `--steps`
that reaches the accuracy target in the fewest communication rounds (the paper also picked its
step sizes from a grid). Distance |zbar - z*|^2 / |z0 - z*|^2 and the duality gap are recorded
against oracle calls g_ij per node and communication rounds (gossip rounds; an all-reduce counts
as one). Seconds per round come from real gloo processes (one per node) spawned on this machine.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run diverse

writes diverse.{json,md} and docs/figures/diverse_<topology>_<nodes>.png.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from torch import Tensor

from optiforge.algorithms.diverse import (
    RunSettings,
    load_compas_regression,
    make_topology,
    simulate,
    split_shards,
)
from optiforge.algorithms.diverse.launch import main as launch
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.problems.data_paths import data_path

METHODS = ("diverse", "diverse_full_batch", "gt_eg", "gt_eg_fastmix", "centralized_ogda")


def method_settings(
    name: str, base: RunSettings, rounds: int, shard: int, args: Config
) -> RunSettings:
    """The run of `name` (before the step size): DIVERSE with random batches of mean b, DIVERSE
    in the notes' full-batch regime (b = n, p = beta = 0), GT-EG with one plain gossip round or
    with FastMix, and all-reduce OGDA."""
    fastmix = {"mix_rounds": rounds, "accelerated": True}
    if name == "diverse":
        return replace(base, method="diverse", batch_size=args.batch_size, **fastmix,
                       iterations=args.batch_iterations)  # fmt: skip
    if name == "diverse_full_batch":
        return replace(base, method="diverse", batch_size=float(shard), batch_distribution="fixed",
                       snapshot_probability=0.0, beta=0.0, **fastmix)  # fmt: skip
    if name == "gt_eg":
        return replace(base, method="gt_eg", mix_rounds=1, accelerated=False)
    if name == "gt_eg_fastmix":
        return replace(base, method="gt_eg", **fastmix)
    return replace(base, method="centralized_ogda", alpha=1.0)


def to_target(history: list[dict], target: float, key: str) -> float | None:
    """`key` at the first record whose relative distance is <= target (None if never)."""
    start = history[0]["distance"]
    return next((row[key] for row in history if row["distance"] <= target * start), None)


def tune(
    settings: RunSettings, steps: list[float], features: Tensor, targets: Tensor, target: float
) -> dict:
    """Runs every step size; keeps the one reaching `target` in the fewest rounds (else the
    smallest final distance)."""
    best = None
    for step in steps:
        mu = min(settings.lambda_x, settings.lambda_y)
        alpha = 1.0 - mu * step if settings.method == "diverse" else settings.alpha
        history, _ = simulate(replace(settings, step_size=step, alpha=alpha), features, targets)
        rounds = to_target(history, target, "communication")
        final = history[-1]["distance"] / history[0]["distance"]
        key = (0, rounds) if rounds is not None else (1, final if math.isfinite(final) else 1e300)
        if best is None or key < best["key"]:
            best = {"key": key, "step": step, "alpha": alpha, "history": history}
    return best


def timing(settings: RunSettings, iterations: int, by_target: bool) -> float:
    """Seconds per communication round of `settings` on real gloo processes (one per node)."""
    with tempfile.TemporaryDirectory() as directory:
        output = Path(directory) / "run.json"
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in settings.as_dict().items()
                 if v is not None and not isinstance(v, bool)]  # fmt: skip
        flags.append("--accelerated" if settings.accelerated else "--no-accelerated")
        flags += [f"--iterations={iterations}", f"--log-every={iterations}", f"--output={output}"]
        flags += [f"--data={data_path('compas/compas.csv')}"] + (
            ["--by-target"] if by_target else []
        )
        launch(flags)
        last = json.loads(output.read_text())["history"][-1]
    return last["seconds"] / max(last["communication"], 1)


def figure(cell: dict, out: Path) -> Path:
    """Relative distance and gap vs oracle calls per node and vs communication rounds."""
    plot = new_figure(2, 2)
    for name, run in cell["methods"].items():
        history = run["history"]
        start = history[0]["distance"]
        for row, metric in enumerate(("distance", "gap")):
            values = [h[metric] / (start if metric == "distance" else 1.0) for h in history]
            for column, axis in enumerate(("evaluations_per_node", "communication")):
                axes = plot.axes[2 * row + column]
                axes.plot([h[axis] for h in history], values, label=f"{name} (eta {run['step']})")
                label = "|zbar - z*|^2 / |z0 - z*|^2" if row == 0 else "duality gap"
                axes.set(yscale="log", xlabel=axis.replace("_", " "), ylabel=label)
    for axes in plot.axes:
        axes.set_ylim(bottom=1e-14)
    reached = [
        to_target(run["history"], 1e-13, "communication") or run["history"][-1]["communication"]
        for run in cell["methods"].values()
    ]
    for axes in plot.axes[1::2]:
        axes.set_xlim(0, 1.1 * max(reached))
    plot.axes[0].set_xscale("log")
    plot.axes[2].set_xscale("log")
    plot.axes[1].legend(fontsize=7)
    plot.suptitle(f"{cell['topology']}, {cell['nodes']} nodes (lambda2 = {cell['lambda2']:.3f})")
    return save(plot, out)


def table(cells: list[dict], targets: list[float]) -> str:
    """One row per (setting, method): step, rounds and oracle calls to each target, timing."""
    head = (
        "| nodes | topology | method | eta | "
        + " | ".join(f"rounds to {t:g} | oracle calls/node to {t:g}" for t in targets)
        + " | final rel. distance | final gap | ms/round (gloo) |"
    )
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for cell in cells:
        for name, run in cell["methods"].items():
            h = run["history"]
            reach = []
            for t in targets:
                rounds, calls = (
                    to_target(h, t, k) for k in ("communication", "evaluations_per_node")
                )
                reach += [
                    "-" if rounds is None else str(rounds),
                    "-" if calls is None else f"{calls:.0f}",
                ]
            ms = f"{1e3 * run['seconds_per_round']:.2f}" if "seconds_per_round" in run else ""
            lines.append(
                f"| {cell['nodes']} | {cell['topology']} | {name} | {run['step']} | "
                + " | ".join(reach)
                + f" | {h[-1]['distance'] / h[0]['distance']:.1e} | {h[-1]['gap']:.1e} | {ms} |"
            )
    return "\n".join(lines)


@dataclass(frozen=True)
class Config:
    """`iid`: shuffled shards instead of by target."""

    nodes: tuple[int, ...] = (2, 4, 8)
    topologies: tuple[str, ...] = ("ring", "erdos_renyi")
    edge_probability: float = 0.4
    steps: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3)
    targets: tuple[float, ...] = (1e-4, 1e-8)
    lambda_reg: float = 0.1
    batch_size: float = 16.0
    iterations: int = 800
    batch_iterations: int = 4000
    log_every: int = 10
    timing_iterations: int = 40
    timed_methods: tuple[Literal[METHODS], ...] = ("diverse", "gt_eg")
    iid: bool = False
    seed: int = 0


def main(run: Run, args: Config) -> None:
    """Sweep settings and methods, time the distributed runs, write tables and figures."""
    by_target = not args.iid
    features, targets = load_compas_regression(data_path("compas/compas.csv"))
    cells = []
    for nodes in args.nodes:
        shards = split_shards(features, targets, nodes, args.seed, by_target)
        for topology in args.topologies:
            graph = make_topology(topology, nodes, args.edge_probability, args.seed)
            rounds = max(1, math.ceil(1.0 / math.sqrt(1.0 - graph.lambda2)))
            base = RunSettings(
                nodes=nodes, topology=topology, edge_probability=args.edge_probability,
                lambda_x=args.lambda_reg, lambda_y=args.lambda_reg, iterations=args.iterations,
                log_every=args.log_every, seed=args.seed,
            )  # fmt: skip
            cell = {"nodes": nodes, "topology": topology, "lambda2": graph.lambda2,
                    "fastmix_rounds": rounds, "methods": {}}  # fmt: skip
            for name in METHODS:
                settings = method_settings(name, base, rounds, shards[0].shape[1], args)
                best = tune(settings, args.steps, *shards, min(args.targets))
                found = {"step": best["step"], "alpha": best["alpha"], "history": best["history"]}
                if name in args.timed_methods:
                    tuned = replace(settings, step_size=best["step"], alpha=best["alpha"])
                    found["seconds_per_round"] = timing(tuned, args.timing_iterations, by_target)
                cell["methods"][name] = found
            cells.append(cell)
            run.log(f"{topology} {nodes} nodes done")
    text = (
        f"# DIVERSE on COMPAS robust regression ({'iid' if args.iid else 'by-target'} shards, "
        f"lambda = {args.lambda_reg}, b = {args.batch_size}, steps {args.steps})\n\n"
        "FastMix rounds K per mix: "
        + ", ".join(
            f"{c['topology']} m={c['nodes']}: K={c['fastmix_rounds']} (lambda2 {c['lambda2']:.3f})"
            for c in cells
        )
        + "\n\nms/round: wall seconds of the steps / communication rounds, one gloo process per "
        "node on this machine's 2 CPU cores (8 processes oversubscribe them).\n\n"
        + table(cells, args.targets)
        + "\n"
    )
    stem = "diverse_iid" if args.iid else "diverse"
    run.write(stem, {"args": asdict(args), "cells": cells}, text, indent=None)
    if not args.iid:
        for cell in cells:
            figure(cell, run.figure(f"diverse_{cell['topology']}_{cell['nodes']}.png"))


BENCHMARK = Benchmark(
    "diverse",
    main,
    Config,
    smoke=dict(nodes=(2,), topologies=("ring",), steps=(0.2,), iterations=30, batch_iterations=40,
               timing_iterations=3, timed_methods=("diverse",)),
)  # fmt: skip

if __name__ == "__main__":
    BENCHMARK.main()
