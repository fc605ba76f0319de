"""The optimizer zoo: every optimizer of `optiforge.optimizers.available()` and four peers
(AdamW, SGD with momentum, pytorch-optimizer's SAM and SCION) on three testbeds, one table.

    python -m optiforge.benchmarks run optimizer_zoo [--steps 100 50 100] [--seeds 3]
        [--lr-factors 0.25 1 4] [--testbeds digits_cnn char_lm compas_mlp]
        [--optimizers AdamW SAM ...] [--eval-batches 3] [--wandb | --no-wandb]

Protocol, per testbed (`optimizer_zoo_runs.TESTBEDS`; in-process Trainers with the
`OptimizerAdapter`, one thread): every entrant takes the same number of optimizer steps on the
same batches; its lr is chosen from `lr_factors` x its default (`optimizer_zoo_specs`) by the
validation metric of seed 0 (accuracy, or the LM's validation loss), then seeds 1.. run at that
lr; the table gives the test metric's mean +- std over the seeds, the median time per step, the
peak tensor memory of a few training steps and the optimizer's state bytes, each as a ratio to
AdamW measured in the same process run. Writes
optimizer_zoo.{json,md} and the figure optimizer_zoo.png (test metric against time ratio, one
panel per testbed). W&B: one run with the table when `--wandb`, or by default when
WANDB_API_KEY is set (offline without credentials).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.benchmarks.optimizer_zoo_runs import (
    TESTBEDS,
    RunResult,
    Testbed,
    median_step,
    peak_step_bytes,
    train_once,
)
from optiforge.benchmarks.optimizer_zoo_select import (
    choose_lr,
    lr_grid,
    mean_and_std,
    needs_tags,
    ratio,
)
from optiforge.benchmarks.optimizer_zoo_specs import Entrant, entrants

TestbedName = Literal["digits_cnn", "char_lm", "compas_mlp"]
LABELS = {"digits_cnn": "digits CNN", "char_lm": "char LM", "compas_mlp": "COMPAS MLP"}


@dataclass(frozen=True)
class Config:
    steps: tuple[int, ...] = (100, 50, 100)  # optimizer steps, one per testbed (same order)
    seeds: int = 3  # seeds 0..n-1 at the chosen lr (seed 0 also picks the lr)
    lr_factors: tuple[float, ...] = (0.25, 1.0, 4.0)  # lr grid = factors x the default lr
    testbeds: tuple[TestbedName, ...] = ("digits_cnn", "char_lm", "compas_mlp")
    optimizers: tuple[str, ...] | None = None  # a subset by name (AdamW is always run)
    eval_batches: int | None = 3  # val / test batches per evaluation (None: whole splits)
    hessian_limit: int = 10_000  # most parameters for HessianReuseAGD's d x d Hessian
    wandb: bool | None = None  # None: log to W&B iff WANDB_API_KEY is set
    timing_rounds: int = 3  # rounds of the interleaved step timing (every entrant once a round)
    timing_steps: int = 10  # steps per entrant and round (the first 3 are warm-up)
    memory_steps: int = 3  # training steps whose peak tensor memory is measured (chosen lr)

    def __post_init__(self) -> None:
        if len(self.steps) != len(self.testbeds):
            raise ValueError(
                f"steps: give one per testbed ({len(self.testbeds)}), got {len(self.steps)}"
            )
        names = [entrant.name for entrant in entrants("digits_cnn")[0]]
        unknown = sorted(set(self.optimizers or ()) - set(names))
        if unknown:
            raise ValueError(f"optimizers: unknown {unknown}; choose from {names}")


def _summarize(
    testbed: Testbed, grid: dict[float, RunResult], seeds: list[RunResult], chosen: float
) -> dict[str, Any]:
    """One entrant's row on one testbed (before the ratios to AdamW)."""
    runs = [grid[chosen], *seeds]
    mean, std = mean_and_std([run.test for run in runs])
    steps = [median_step(run.step_seconds) for run in [*grid.values(), *seeds]]
    return {
        "lr": chosen,
        "grid_val": {str(lr): run.val for lr, run in grid.items()},
        "val_seed0": grid[chosen].val,
        "test": [run.test for run in runs],
        "test_mean": mean,
        "test_std": std,
        "seconds_per_step": sorted(steps)[len(steps) // 2],
        "state_bytes": max(run.state_bytes for run in runs),
    }


def run_entrant(entrant: Entrant, testbed: Testbed, steps: int, args: Config) -> dict[str, Any]:
    """The grid on seed 0, the lr chosen on validation, the other seeds at that lr."""
    model, _ = testbed.build()
    reason = entrant.skip_reason(model, args.hessian_limit)
    if reason is not None:
        return {"skipped": reason}
    lrs, dropped = lr_grid(entrant.default_lr, args.lr_factors, entrant.max_lr)
    if not lrs:
        return {"skipped": f"every lr of the grid is above the optimizer's bound {entrant.max_lr}"}
    grid = {lr: train_once(testbed, entrant, lr, 0, steps, args.eval_batches) for lr in lrs}
    chosen = choose_lr({lr: run.val for lr, run in grid.items()}, testbed.higher_is_better)
    if chosen is None:
        return {"skipped": "diverged at every lr of the grid"}
    seeds = [
        train_once(testbed, entrant, chosen, seed, steps, args.eval_batches)
        for seed in range(1, args.seeds)
    ]
    return {**_summarize(testbed, grid, seeds, chosen), "grid_dropped_above_bound": dropped}


def run_testbed(name: str, steps: int, args: Config, run: Run) -> dict[str, dict[str, Any]]:
    """Every entrant on one testbed, with its time, peak-memory and state ratios to AdamW."""
    testbed, (zoo, missing) = TESTBEDS[name], entrants(name)
    rows: dict[str, dict[str, Any]] = {peer: {"skipped": why} for peer, why in missing.items()}
    for entrant in zoo:
        if args.optimizers and entrant.name != "AdamW" and entrant.name not in args.optimizers:
            continue
        start = time.perf_counter()
        try:
            row = run_entrant(entrant, testbed, steps, args)
        except Exception as error:  # recorded, and raised after the table is written
            row = {"failed": f"{type(error).__name__}: {error}"}
        row.update(needs=needs_tags(entrant.needs), peer=entrant.peer)
        rows[entrant.name] = row
        run.log(
            f"{name:10s} {entrant.name:26s} {_brief(row)} ({time.perf_counter() - start:.0f} s)"
        )
    reference = rows["AdamW"]
    timed = {e.name: (e, rows[e.name]["lr"]) for e in zoo if "test_mean" in rows.get(e.name, {})}
    if "AdamW" in timed:
        run.log(f"{name:10s} interleaved step timing: {len(timed)} entrants")
        for entrant_name, value in interleaved_ratios(testbed, timed, args).items():
            rows[entrant_name]["time_ratio"] = value
        run.log(f"{name:10s} peak memory of {args.memory_steps} steps: {len(timed)} entrants")
        for entrant_name, (entrant, lr) in timed.items():
            rows[entrant_name]["peak_bytes"] = peak_step_bytes(
                testbed, entrant, lr, args.memory_steps
            )
    for row in rows.values():
        if "test_mean" in row and "test_mean" in reference:
            row["state_ratio"] = ratio(row["state_bytes"], reference["state_bytes"])
        if "peak_bytes" in row:
            row["peak_ratio"] = ratio(row["peak_bytes"], reference["peak_bytes"])
    return rows


def interleaved_ratios(
    testbed: Testbed, timed: dict[str, tuple[Entrant, float]], args: Config
) -> dict[str, float]:
    """Each entrant's step time over AdamW's, timed in alternating rounds (every entrant runs
    `timing_steps` steps at its chosen lr once a round, AdamW among them), so that load from
    other processes falls on both sides of a ratio alike: the median over rounds of the ratio
    of the two median step times of that round."""
    per_round: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(args.timing_rounds):
        for name, (entrant, lr) in timed.items():
            result = train_once(testbed, entrant, lr, 0, args.timing_steps, eval_batches=1)
            per_round[name].append(median_step(result.step_seconds))
    adamw = per_round["AdamW"]
    return {
        name: statistics.median(ratio(s, a) for s, a in zip(seconds, adamw, strict=True))
        for name, seconds in per_round.items()
    }


def _brief(row: dict[str, Any]) -> str:
    if "test_mean" not in row:
        return row.get("skipped") or row["failed"]
    return f"lr {row['lr']:.3g} test {row['test_mean']:.4f} +- {row['test_std']:.4f}"


def _cell(row: dict[str, Any], key: str, fmt: str) -> str:
    if "test_mean" not in row:
        return ("skipped" if "skipped" in row else "failed") if key == "test" else "-"
    if key == "test":
        return f"{row['test_mean']:{fmt}} ± {row['test_std']:{fmt}}"
    value = row.get(key)
    return (
        "-"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else format(value, fmt)
    )


def tables(results: dict[str, dict[str, dict[str, Any]]]) -> tuple[str, list[dict[str, Any]]]:
    """The markdown (one row per optimizer, four columns per testbed; then AdamW's peak bytes,
    the chosen lrs and what was skipped) and the flat rows (W&B)."""
    names = list(dict.fromkeys(n for rows in results.values() for n in rows))
    columns = [Column("optimizer", "optimizer"), Column("loop needs", "needs")]
    flat = []
    for testbed in results:
        metric = "test acc" if TESTBEDS[testbed].higher_is_better else "test loss"
        label = LABELS[testbed]
        columns += [
            Column(f"{label} {metric}", f"{testbed}:test"),
            Column("time ×", f"{testbed}:time_ratio", rule="---:"),
            Column("peak mem ×", f"{testbed}:peak_ratio", rule="---:"),
            Column("state ×", f"{testbed}:state_ratio", rule="---:"),
        ]
    lines, lrs, notes = [], [], []
    for name in names:
        line = {"optimizer": name, "needs": "-"}
        lr_line = {"optimizer": name}
        for testbed, rows in results.items():
            row = rows.get(name, {"skipped": "not selected"})
            line["needs"] = row.get("needs", line["needs"])
            line[f"{testbed}:test"] = _cell(row, "test", ".4f")
            line[f"{testbed}:time_ratio"] = _cell(row, "time_ratio", ".2f")
            line[f"{testbed}:peak_ratio"] = _cell(row, "peak_ratio", ".2f")
            line[f"{testbed}:state_ratio"] = _cell(row, "state_ratio", ".2f")
            lr_line[testbed] = f"{row['lr']:.3g}" if "lr" in row else "-"
            why = row.get("skipped") or row.get("failed")
            if why and why != "not selected":
                notes.append(f"- {name} on {LABELS[testbed]}: {why}")
            flat.append(
                {
                    "testbed": testbed,
                    "optimizer": name,
                    **{k: v for k, v in row.items() if k != "grid_val"},
                }
            )
        lines.append(line)
        lrs.append(lr_line)
    lr_columns = [Column("optimizer", "optimizer")] + [Column(LABELS[t], t) for t in results]
    peaks = [
        f"{LABELS[t]} {rows['AdamW']['peak_bytes'] / 1e6:.3g} MB"
        for t, rows in results.items()
        if "peak_bytes" in rows.get("AdamW", {})
    ]
    text = markdown_table(lines, columns)
    if peaks:
        text += "\n\nAdamW's peak (peak mem × = 1): " + ", ".join(peaks) + "."
    text += "\n\nChosen lr:\n\n" + markdown_table(lrs, lr_columns)
    if notes:
        text += "\n\nNot measured:\n\n" + "\n".join(notes)
    return text, flat


def draw(results: dict[str, dict[str, dict[str, Any]]]) -> Any:
    """Test metric (mean, bar: std over seeds) against time per step / AdamW's, per testbed."""
    figure = new_figure(len(results), 1, width=5.5, height=5.0)
    for axis, (testbed, rows) in zip(figure.axes, results.items(), strict=True):
        for name, row in rows.items():
            if "time_ratio" not in row or row["time_ratio"] is None:
                continue
            marker = "s" if row["peer"] else "o"
            axis.errorbar(
                row["time_ratio"],
                row["test_mean"],
                yerr=row["test_std"],
                fmt=marker,
                ms=4,
                capsize=2,
            )
            axis.annotate(
                name,
                (row["time_ratio"], row["test_mean"]),
                fontsize=6,
                xytext=(3, 2),
                textcoords="offset points",
            )
        axis.set_xscale("log")
        axis.set_xlabel("time per step / AdamW's")
        metric = "test accuracy" if TESTBEDS[testbed].higher_is_better else "test loss (nats/char)"
        axis.set_ylabel(metric)
        axis.set_title(f"{LABELS[testbed]} (squares: peers)")
        axis.grid(alpha=0.3)
    return figure


def main(run: Run, args: Config) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        results = {
            name: run_testbed(name, steps, args, run)
            for name, steps in zip(args.testbeds, args.steps, strict=True)
        }
    finally:
        torch.set_num_threads(threads)
    text, flat = tables(results)
    config = asdict(args)
    payload = {
        "config": config,
        "measured": {
            "time": "wall seconds per training step (forward, backward, optimizer step, every "
            "closure pass) as a ratio to AdamW, timed in alternating rounds (each entrant "
            "timing_steps steps at its chosen lr once a round, AdamW among them; median step "
            "after 3 warm-up steps): the median over rounds of the round's ratio; "
            "seconds_per_step is the median over the selection runs, not interleaved",
            "peak": "peak_bytes: the most bytes of torch tensors allocated and not yet freed "
            "during memory_steps training steps (forward, backward, optimizer step, every "
            "closure pass) at the chosen lr, seed 0, counted from the start of the first step "
            "(its batch loaded; parameters and data held before are the zero); CPU: torch "
            "profiler allocation events, frees of blocks allocated before the first step not "
            "reported; peak_ratio: over AdamW's",
            "state": "bytes of the tensors the optimizer holds besides the parameters (CPU)",
            "test": "test metric at the final weights, seeds 0..n-1 at the chosen lr",
        },
        "results": results,
    }
    run.write("optimizer_zoo", payload, text)
    save(draw(results), run.figure("optimizer_zoo.png"))
    if args.wandb or (args.wandb is None and os.environ.get("WANDB_API_KEY")):
        from optiforge.benchmarks.wandb_tables import log_tables

        keys = sorted({key for row in flat for key in row})
        log_tables(
            "optimizer_zoo",
            config,
            {"optimizer_zoo": (keys, [[str(row.get(k, "")) for k in keys] for row in flat])},
        )
    failed = [
        f"{t}/{n}: {row['failed']}"
        for t, rows in results.items()
        for n, row in rows.items()
        if "failed" in row
    ]
    if failed:
        raise RuntimeError(
            "optimizer_zoo: runs failed (the table records them): " + "; ".join(failed)
        )


BENCHMARK = Benchmark(
    "optimizer_zoo",
    main,
    Config,
    # smoke: every entrant on every testbed, 3 steps at its default lr, one seed, one eval batch;
    # HessianReuseAGD's Hessian on COMPAS alone takes minutes, so it is skipped (hessian_limit)
    smoke=dict(
        steps=(3, 3, 3),
        seeds=1,
        lr_factors=(1.0,),
        eval_batches=1,
        hessian_limit=1000,
        wandb=False,
        timing_rounds=1,
        timing_steps=2,
        memory_steps=2,
    ),
    peers=("pytorch_optimizer",),
)

if __name__ == "__main__":
    BENCHMARK.main()
