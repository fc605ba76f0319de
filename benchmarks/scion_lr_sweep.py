"""Learning-rate sweep: AdamW vs the Scion family, with and without generalized gradient clipping.

Checks the claim of Pethick et al. (2025), "Generalized Gradient Norm Clipping & Non-Euclidean
(L0,L1)-Smoothness" (arXiv 2506.01913), that the clipped variants (Alg. 3 / Alg. 4) stay stable
over a wider range of step sizes than Scion itself.

Tasks (plain torch loops over the project's networks and datamodules, constant lr, same step
budget and batches for every optimizer; seed s fixes the initialization and the data order):
  char_lm  `lightning_modules.char_lm.CharTransformer` (d_model 64, 2 layers, 4 heads, context
           64) on `datamodules.TinyShakespeareDataModule`, batch 16; val = the whole val split.
  digits   the CNN of `optiforge.lightning_modules.Classifier` (channels 32, 64) on
           `optiforge.datamodules.DigitsDataModule`, batch 64; val = its 270-image val split.

Scion parameter groups come from `optiforge.optimizers.scion_param_groups`: Sign -> Spectral -> Sign
(embeddings -> hidden -> head) for the language model, Spectral -> Spectral -> Sign for the CNN,
BiasRMS for vectors; the radii are in `Task.scales`. momentum 0.1 (beta 0.9) for all of them.
rho of a clipped variant is calibrated once per task on seed 0: the median clipping quantity D
(the momentum's dual norm for UnconstrainedClippedScion, the Frank-Wolfe gap for ClippedScion)
over the second half of an unclipped run at the centre of the grid. So clipping is active about
half the time at the centre lr, and the clipped and unclipped methods share one lr grid.

Grid: `--points` powers of two centred on each optimizer's usual range (`OptimizerSpec.centre`,
at most 2^0 for the Frank-Wolfe variants, whose lr must be <= 1).
Metrics per (optimizer, lr), averaged over seeds: final training loss (mean of the last 10 % of
steps) and validation loss after the last step. A run *diverges* if a loss becomes NaN/inf or
the final training loss exceeds the initial one. *Stable lr range* = number of grid points (in
octaves) that did not diverge on any seed and whose final loss is within `--tolerance` (1.5x) of
the best final loss of that optimizer on that task. A factor of the best loss is loose for the
char LM (1.5 x 2.3 nats is about the unigram entropy) and strict for digits (best ~0.002), so
the report also counts the points that achieved >= 90 % of the optimizer's best loss reduction
from the initial loss (`near_best_points`).

Run from the project root: `python -m optiforge.benchmarks run scion_lr_sweep` (writes
scion_lr_sweep.{json,md} and the figure scion_lr_sweep.png; `--seeds 2`, `--quick` for a smoke
test, `--wandb` to log curves and the plot to W&B, offline without credentials). `--plot-only`
redraws the figure from the published JSON (same `--output-stem`) without training.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from optiforge.benchmarks.figures import save
from optiforge.benchmarks.harness import Benchmark
from optiforge.benchmarks.harness import Run as HarnessRun
from optiforge.benchmarks.harness.registry import RESULTS
from optiforge.benchmarks.scion_lr_figure import draw_lr_sweep
from optiforge.benchmarks.scion_lr_optimizers import (
    OptimizerSpec,
    clipping_quantity,
    grid,
    optimizer_specs,
)
from optiforge.benchmarks.scion_lr_report import (
    NEAR_BEST_SHARE,
    json_safe,
    log_to_wandb,
    markdown_report,
)
from optiforge.benchmarks.scion_lr_tasks import Batch, Task, make_tasks


@dataclass
class Run:
    """One training run: the per-step training losses and the final validation loss."""

    losses: list[float] = field(default_factory=list)
    val_loss: float = math.nan
    diverged: bool = False
    clip_quantity: list[float] = field(default_factory=list)

    @property
    def final_loss(self) -> float:
        """Mean training loss over the last 10 % of the steps (NaN if the run blew up)."""
        if self.diverged and not all(math.isfinite(v) for v in self.losses):
            return math.nan
        tail = self.losses[-max(1, len(self.losses) // 10) :]
        return sum(tail) / len(tail)


def train(
    task: Task,
    spec: OptimizerSpec,
    lr: float,
    rho: float,
    seed: int,
    batches: list[Batch],
    val: list[Batch],
    record: str | None = None,
) -> Run:
    """Train a fresh net for `len(batches)` steps at constant `lr`; `record` ("dual_norm" or
    "fw_gap") also stores the clipping quantity D before every step."""
    net = task.build(seed)
    optimizer = spec.build(net, task, lr, rho)
    run = Run()
    net.train()
    for batch in batches:
        loss = task.loss(net, batch)
        run.losses.append(loss.item())
        if not math.isfinite(run.losses[-1]):
            run.diverged = True
            return run
        optimizer.zero_grad()
        loss.backward()
        if record is not None:
            run.clip_quantity.append(clipping_quantity(optimizer, record))
        optimizer.step()
    net.eval()
    with torch.no_grad():
        sizes = [len(b[0]) for b in val]
        total = sum(task.loss(net, b).item() * n for b, n in zip(val, sizes, strict=True))
    run.val_loss = total / sum(sizes)
    run.diverged = not math.isfinite(run.val_loss) or run.final_loss > run.losses[0]
    return run


def calibrate_rho(
    task: Task,
    spec: OptimizerSpec,
    unclipped: OptimizerSpec,
    points: int,
    batches: list[Batch],
    val: list[Batch],
) -> float:
    """Median D over the second half of an unclipped run (seed 0) at the grid centre's lr."""
    lr = grid(spec.centre, points)[points // 2]
    run = train(task, unclipped, lr, 1.0, 0, batches, val, record=spec.clipped_quantity)
    values = run.clip_quantity[len(run.clip_quantity) // 2 :]
    rho = statistics.median(values)
    if not rho > 0:
        raise RuntimeError(f"{task.name}/{spec.name}: calibrated rho = {rho} is not positive")
    return rho


def stable_points(values: list[float], diverged: list[bool], tolerance: float) -> int:
    """Grid points that did not diverge and are within `tolerance` x of the best value."""
    finite = [v for v, bad in zip(values, diverged, strict=True) if not bad and math.isfinite(v)]
    if not finite:
        return 0
    best = min(finite)
    return sum(1 for v in finite if v <= tolerance * best)


def near_best_points(
    values: list[float], diverged: list[bool], initial: float, share: float = NEAR_BEST_SHARE
) -> int:
    """Grid points that did not diverge and achieved >= `share` of the best loss reduction:
    loss <= best + (1 - share) (initial - best). Unlike a factor of the best loss, this means
    the same on a loss that ends near ln(65) / 2 (the char LM) and one that ends near 0."""
    finite = [v for v, bad in zip(values, diverged, strict=True) if not bad and math.isfinite(v)]
    if not finite:
        return 0
    best = min(finite)
    return sum(1 for v in finite if v <= best + (1.0 - share) * (initial - best))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _subsample(losses: list[float], every: int = 5) -> list[float]:
    return losses[::every]


def sweep_task(
    task: Task,
    specs: list[OptimizerSpec],
    points: int,
    seeds: int,
    tolerance: float,
    rho_factor: float,
) -> dict[str, Any]:
    """Every optimizer at every lr of its grid and every seed; summary per optimizer.
    rho of a clipped method = `rho_factor` x the calibrated median D (`calibrate_rho`)."""
    datasets = [task.data(seed) for seed in range(seeds)]
    batches = [task.train_batches(data) for data in datasets]
    vals = [task.val_batches(data) for data in datasets]
    by_name = {spec.name: spec for spec in optimizer_specs()}
    results: dict[str, Any] = {}
    for spec in specs:
        start = time.perf_counter()
        rho = math.nan
        if spec.unclipped is not None:
            partner = by_name[spec.unclipped]
            rho = rho_factor * calibrate_rho(task, spec, partner, points, batches[0], vals[0])
        lrs = grid(spec.centre, points)
        rows = []
        for lr in lrs:
            runs = [
                train(task, spec, lr, rho, seed, batches[seed], vals[seed]) for seed in range(seeds)
            ]
            rows.append(runs)
        final = [_mean([r.final_loss for r in runs]) for runs in rows]
        val = [_mean([r.val_loss for r in runs]) for runs in rows]
        diverged = [sum(r.diverged for r in runs) for runs in rows]
        flags = [n > 0 for n in diverged]
        best = min(range(points), key=lambda i: math.inf if flags[i] else final[i])
        initial = _mean([rows[0][s].losses[0] for s in range(seeds)])
        results[spec.name] = {
            "lrs": lrs,
            "log2_lrs": [round(math.log2(lr)) for lr in lrs],
            "rho": None if math.isnan(rho) else rho,
            "initial_loss": initial,
            "final_train_loss": final,
            "final_val_loss": val,
            "diverged_seeds": diverged,
            "best_lr": lrs[best],
            "best_final_train_loss": final[best],
            "best_final_val_loss": min(v for v, bad in zip(val, flags, strict=True) if not bad)
            if not all(flags)
            else math.nan,
            "stable_points_train": stable_points(final, flags, tolerance),
            "stable_points_val": stable_points(val, flags, tolerance),
            "near_best_points_train": near_best_points(final, flags, initial),
            "curves_seed0": [_subsample(runs[0].losses) for runs in rows],
            "seconds": time.perf_counter() - start,
        }
        row = results[spec.name]
        print(
            f"{task.name:>8} {spec.name:>26}: best lr 2^{round(math.log2(row['best_lr']))}, "
            f"final {row['best_final_train_loss']:.4f}, stable {row['stable_points_train']}/"
            f"{points} (val {row['stable_points_val']}/{points}), {row['seconds']:.0f} s",
            flush=True,
        )
    return results


@dataclass(frozen=True)
class Config:
    """`seeds` 0..n-1 per grid point, `points` lr grid points per optimizer, stable = final loss
    <= `tolerance` x best; `tasks` and `optimizers` (None: all) comma-separated; rho =
    `rho_factor` x median D; `quick`: tiny nets, 10 steps, 3 points; `plot_only`: redraw the
    figure from the published JSON `<output_stem>.json`, no runs."""

    seeds: int = 1
    points: int = 9
    tolerance: float = 1.5
    tasks: str = "char_lm,digits"
    optimizers: str | None = None
    rho_factor: float = 1.0
    output_stem: str = "scion_lr_sweep"
    quick: bool = False
    wandb: bool = False
    plot_only: bool = False

    def __post_init__(self) -> None:
        if self.seeds < 1 or self.points < 2 or self.tolerance < 1.0 or not self.rho_factor > 0:
            raise ValueError("seeds must be >= 1, points >= 2, tolerance >= 1, rho_factor > 0")
        if self.plot_only and not (source := RESULTS / f"{self.output_stem}.json").is_file():
            raise ValueError(f"plot_only: no sweep results at {source} (check output_stem)")


def main(run: HarnessRun, args: Config) -> dict[str, Any]:
    png = run.figure(f"{args.output_stem}.png")
    if args.plot_only:
        payload = json.loads((RESULTS / f"{args.output_stem}.json").read_text())
        save(draw_lr_sweep(payload), png)
        return payload
    points = 3 if args.quick else args.points
    tasks = {task.name: task for task in make_tasks(args.quick)}
    names = args.tasks.split(",")
    unknown = sorted(set(names) - set(tasks))
    if unknown:
        raise ValueError(f"tasks: unknown {unknown}; choose from {sorted(tasks)}")
    specs = optimizer_specs()
    if args.optimizers is not None:
        wanted = args.optimizers.split(",")
        unknown = sorted(set(wanted) - {spec.name for spec in specs})
        if unknown:
            raise ValueError(
                f"optimizers: unknown {unknown}; choose from {[s.name for s in specs]}"
            )
        specs = [spec for spec in specs if spec.name in wanted]
    for spec in specs:
        if spec.name in ("Scion", "ClippedScion") and grid(spec.centre, points)[-1] > 1.0:
            raise ValueError(f"points {points}: the {spec.name} grid would exceed lr = 1")

    config: dict[str, Any] = {
        "command": run.provenance["command"],
        "seeds": args.seeds,
        "points": points,
        "tolerance": args.tolerance,
        "rho_factor": args.rho_factor,
        "tasks": {
            name: {
                "steps": tasks[name].steps,
                "size": tasks[name].size,
                "scales": tasks[name].scales,
                "norms": tasks[name].norms,
            }
            for name in names
        },
        "momentum_scion": 0.1,
        "adamw": "torch defaults (betas 0.9/0.999, weight_decay 0.01)",
        "final_train_loss": "mean training loss of the last 10 % of steps",
        "diverged": "NaN/inf loss, or final training loss above the initial loss",
        "stable_points": f"grid points not diverged with loss <= {args.tolerance} x best",
        "near_best_points": (
            f"grid points not diverged with loss <= best + {1 - NEAR_BEST_SHARE:g} (initial - best)"
        ),
    }
    start, threads = time.perf_counter(), torch.get_num_threads()
    torch.set_num_threads(1)  # the sweep shares the machine; one thread per run is fastest
    try:
        results = {
            name: sweep_task(
                tasks[name], specs, points, args.seeds, args.tolerance, args.rho_factor
            )
            for name in names
        }
    finally:
        torch.set_num_threads(threads)
    config["seconds"] = time.perf_counter() - start
    header = (
        f"Constant-lr sweep, {points} points per optimizer, {args.seeds} seed(s), "
        f"stable = not diverged and within {args.tolerance}x of the optimizer's best final loss, "
        f"or >= {NEAR_BEST_SHARE:.0%} of its best loss reduction from the initial loss. "
        f"Command: `{config['command']}`."
    )
    report = markdown_report(results, header, points, args.tolerance)
    payload = json_safe({"config": config, "results": results})
    run.write(args.output_stem, payload, report)
    save(draw_lr_sweep(payload), png)
    if args.wandb:
        log_to_wandb(config, results, png)
    return payload


BENCHMARK = Benchmark("scion_lr_sweep", main, Config, smoke=dict(quick=True))

if __name__ == "__main__":
    BENCHMARK.main()
