"""MTL-KD figures from `benchmarks.mtlkd_evaluation`'s JSON (gap vs R3C budget, gap vs size)
and from the shipped models' training history (gap vs training hours).

    python -m optiforge.benchmarks run mtlkd_figures [--results-dir benchmarks/results]

redraws every figure from the published results (no model is run): `mtlkd_r3c_n<size>`
gives the mean gap to PyVRP after each R3C budget (all variants, seen, unseen, and every variant
thin), `mtlkd_generalization` the gap of each method against the instance size, one panel per
variant, and `mtlkd_gap_vs_hours` each shipped model's gap on MVMoE's n = 50 files against its
cumulative training hours (`lightning_modules/mtlkd/weights/training_history.json`). Each line
carries a `gid` so the plotted values can be read back. `mtlkd_figures.json` records the
command, commit and source files of the figures.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.ticker import LogLocator, NullLocator, ScalarFormatter

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.harness.registry import RESULTS
from optiforge.problems.vrp.variants import SEEN_VARIANTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

R3C_STEM = re.compile(r"mtlkd_r3c_n\d+")
GENERALIZATION_STEM = "mtlkd_generalization"
HISTORY = (
    Path(__file__).resolve().parents[1] / "lightning_modules/mtlkd/weights/training_history.json"
)


def r3c_budgets(payload: dict[str, Any]) -> list[int]:
    """The R3C rounds of the curve, 0 (greedy) first."""
    return [0, *payload["budgets"]]


def draw_r3c_budget(payload: dict[str, Any]) -> Figure:
    """Gap (%) to PyVRP against R3C rounds: the mean over all, seen and unseen variants."""
    budgets, rows = r3c_budgets(payload), payload["rows"]
    figure = new_figure(1, width=7.0)
    ax = figure.axes[0]
    for name, row in rows.items():
        gaps = [row[f"gap@{b}"] for b in budgets]
        ax.plot(budgets, gaps, color="0.8", linewidth=0.8, gid=f"variant/{name}")
    groups = {
        "all": list(rows),
        "seen": [v for v in rows if v in SEEN_VARIANTS],
        "unseen": [v for v in rows if v not in SEEN_VARIANTS],
    }
    for index, (group, names) in enumerate(groups.items()):
        if not names:
            continue
        gaps = [statistics.mean(rows[v][f"gap@{b}"] for v in names) for b in budgets]
        label = f"mean, {len(names)} {group} variants"
        color, width = ("k", 2.5) if index == 0 else (f"C{index}", 1.5)
        ax.plot(budgets, gaps, marker="o", color=color, linewidth=width, label=label, gid=group)
    ax.plot([], [], color="0.8", linewidth=0.8, label="one variant")
    size, count = payload["config"]["size"], payload["config"]["r3c_instances"]
    ax.set(
        title=f"MTL-KD student + R3C at n = {size}: gap vs re-construction budget",
        xlabel="R3C rounds (0 = greedy decoding)",
        ylabel=f"gap to PyVRP (%), mean of {count} instances per variant",
        xticks=budgets,
    )
    ax.grid(alpha=0.3)
    ax.legend()
    return figure


def generalization_table(payload: dict[str, Any]) -> dict[str, dict[str, dict[int, float]]]:
    """variant -> method -> {size: gap %} from the rows keyed "<variant>/n<size>"."""
    table: dict[str, dict[str, dict[int, float]]] = {}
    for key, by_method in payload["rows"].items():
        variant, size = key.rsplit("/n", 1)
        for method, row in by_method.items():
            table.setdefault(variant, {}).setdefault(method, {})[int(size)] = row["gap"]
    return table


def draw_generalization(payload: dict[str, Any]) -> Figure:
    """Gap (%) to PyVRP against the number of customers, one panel per variant, log axes."""
    table = generalization_table(payload)
    columns = min(2, len(table))
    figure = new_figure(columns, rows=math.ceil(len(table) / columns), width=5.0, height=4.0)
    for ax in figure.axes[len(table) :]:
        ax.set_visible(False)
    for ax, (variant, by_method) in zip(figure.axes, table.items(), strict=False):
        for index, (method, gaps) in enumerate(by_method.items()):
            sizes = sorted(gaps)
            values = [gaps[n] for n in sizes]
            ax.plot(sizes, values, marker="o", color=f"C{index}", label=method, gid=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set(
            title=variant, xlabel="customers n (log scale)", ylabel="gap to PyVRP (%, log scale)"
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    trained = payload["config"]["size"]
    figure.suptitle(f"MTL-KD student and MTPOMO trained at n = {trained}: gap vs instance size")
    return figure


def draw_gap_vs_hours(history: dict[str, Any]) -> Figure:
    """One line per model: gap % on MVMoE's files against cumulative one-thread hours."""
    figure = new_figure(1)
    axis = figure.axes[0]
    models = dict.fromkeys(point["model"] for point in history["points"])
    for model in models:
        points = sorted((p["hours"], p["gap"]) for p in history["points"] if p["model"] == model)
        hours, gaps = zip(*points, strict=True)
        style = "-" if model.startswith("teacher") else "--"
        axis.plot(hours, gaps, style, marker="o", label=model, gid=model)
    axis.set(xlabel="cumulative training hours (one thread)", ylabel="gap % (MVMoE's n = 50)")
    axis.set_title("MTL-KD: gap against training time (teachers x8, others greedy)")
    axis.legend(fontsize=7)
    return figure


def draw_from_json(source: Path, directory: Path) -> Path | None:
    """Draw the figure of one results JSON into `directory` and return its path; None for a
    part without a figure (suite, cvrplib, real)."""
    stem = source.stem
    if source == HISTORY:
        draw, stem = draw_gap_vs_hours, "mtlkd_gap_vs_hours"
    elif R3C_STEM.fullmatch(stem):
        draw = draw_r3c_budget
    elif stem == GENERALIZATION_STEM:
        draw = draw_generalization
    else:
        return None
    return save(draw(json.loads(source.read_text())), directory / f"{stem}.png")


@dataclass(frozen=True)
class Config:
    results_dir: Path = RESULTS  # where the evaluation's JSON files are read


def main(run: Run, args: Config) -> list[Path]:
    sources = sorted(args.results_dir.glob("mtlkd_*.json"))
    drawn = {source: path for source in sources if (path := draw_from_json(source, run.figure_dir))}
    if not drawn:
        raise ValueError(f"results_dir: no mtlkd_r3c_n*.json or {GENERALIZATION_STEM}.json in it")
    drawn[HISTORY] = draw_from_json(HISTORY, run.figure_dir)
    run.written += drawn.values()
    # The figures' record: the command and commit that drew them, each from which file.
    run.write("mtlkd_figures", {"figures": {path.name: str(src) for src, path in drawn.items()}})
    return list(drawn.values())


BENCHMARK = Benchmark("mtlkd_figures", main, Config, smoke={})

if __name__ == "__main__":
    BENCHMARK.main()
