"""The Scion learning-rate sweep as a figure: final loss against the constant learning rate.

Drawn from the payload `benchmarks.scion_lr_sweep` writes as JSON (`config` + `results`), one
panel per task; a point is missing where any seed diverged and a cross marks it at the top.
Each line carries a `gid` ("<optimizer>/train", "<optimizer>/val", "<optimizer>/diverged") so
the plotted values can be read back.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from matplotlib.lines import Line2D

from optiforge.benchmarks.figures import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# One colour per optimizer in every figure (the rho x10 sweep draws only the clipped ones).
COLORS = {
    "AdamW": "C0",
    "UnconstrainedScion": "C1",
    "UnconstrainedClippedScion": "C2",
    "Scion": "C3",
    "ClippedScion": "C4",
}


def draw_lr_sweep(payload: dict[str, Any]) -> Figure:
    """Final train (solid) and val (dashed) loss per optimizer vs lr; x = diverged on a seed."""
    results, config = payload["results"], payload["config"]
    figure = new_figure(len(results))
    for ax, (task, by_optimizer) in zip(figure.axes, results.items(), strict=True):
        ceiling = max(row["initial_loss"] for row in by_optimizer.values())
        for index, (name, row) in enumerate(by_optimizer.items()):
            clipped, color = row["rho"] is not None, COLORS.get(name, f"C{5 + index}")
            style = {
                "color": color,
                "marker": "s" if clipped else "o",
                "markerfacecolor": "none" if clipped else color,
                "markersize": 8 if clipped else 5,
            }
            ok = [n == 0 for n in row["diverged_seeds"]]
            for kind, line in (("train", "-"), ("val", "--")):
                values = [
                    v if good and v is not None else math.nan
                    for v, good in zip(row[f"final_{kind}_loss"], ok, strict=True)
                ]
                label = name if kind == "train" else "_nolegend_"
                ax.plot(row["lrs"], values, line, label=label, gid=f"{name}/{kind}", **style)
            bad = [lr for lr, good in zip(row["lrs"], ok, strict=True) if not good]
            height = ceiling * 1.08**index  # one row of crosses per optimizer
            marks = {"color": color, "markersize": 9, "label": "_nolegend_"}
            ax.plot(bad, [height] * len(bad), "x", gid=f"{name}/diverged", **marks)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set(
            title=f"{task}: final loss vs learning rate",
            xlabel="learning rate (constant, log2 scale)",
            ylabel="final cross-entropy (nats, log scale)",
        )
        ax.grid(alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        handles += [
            Line2D([], [], color="k", linestyle="-", label="train (last 10 % of steps)"),
            Line2D([], [], color="k", linestyle="--", label="validation (end)"),
            Line2D([], [], color="k", marker="x", linestyle="none", label="diverged on a seed"),
        ]
        ax.legend(handles=handles, fontsize=7)
    factor, seeds = config.get("rho_factor", 1.0), config["seeds"]
    figure.suptitle(
        f"Constant-lr sweep, {seeds} seed{'s' * (seeds != 1)} per point; "
        f"clipped variants with rho = {factor:g} x median D"
    )
    return figure
