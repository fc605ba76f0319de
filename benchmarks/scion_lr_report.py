"""Reports of the Scion learning-rate sweep: JSON-safe payload, Markdown tables, W&B run."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

NEAR_BEST_SHARE = 0.9  # a point is near-best when it reaches this share of the best loss drop


def json_safe(value: Any) -> Any:
    """`value` with every NaN / inf float replaced by None (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    return value


def summary_table(results: dict[str, dict[str, Any]], points: int, tolerance: float) -> str:
    """One row per (task, optimizer): grid, best lr and loss, stable ranges, diverged points."""
    share = round(100 * NEAR_BEST_SHARE)
    lines = [
        "| task | optimizer | lr grid | rho | best lr | best final train loss | best val loss | "
        f"stable: <= {tolerance:g}x best, train / val | stable: >= {share} % of best reduction "
        "| diverged points |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for task, by_optimizer in results.items():
        for name, row in by_optimizer.items():
            ks = row["log2_lrs"]
            rho = "-" if row["rho"] is None else f"{row['rho']:.3g}"
            lines.append(
                f"| {task} | {name} | 2^{ks[0]}..2^{ks[-1]} | {rho} | "
                f"2^{round(math.log2(row['best_lr']))} | {row['best_final_train_loss']:.3f} | "
                f"{row['best_final_val_loss']:.3f} | {row['stable_points_train']} / "
                f"{row['stable_points_val']} of {points} | "
                f"{row['near_best_points_train']} of {points} | "
                f"{sum(n > 0 for n in row['diverged_seeds'])} |"
            )
    return "\n".join(lines) + "\n"


def loss_matrix(by_optimizer: dict[str, Any], key: str) -> str:
    """Optimizers x log2(lr): the seed-mean `key` loss, "div" if a seed diverged, blank off-grid."""
    exponents = sorted({k for row in by_optimizer.values() for k in row["log2_lrs"]})
    lines = [
        "| optimizer | " + " | ".join(f"2^{k}" for k in exponents) + " |",
        "|---|" + "---|" * len(exponents),
    ]
    for name, row in by_optimizer.items():
        cells = {
            k: "div" if bad else f"{value:.3f}"
            for k, value, bad in zip(row["log2_lrs"], row[key], row["diverged_seeds"], strict=True)
        }
        lines.append(f"| {name} | " + " | ".join(cells.get(k, "") for k in exponents) + " |")
    return "\n".join(lines) + "\n"


def markdown_report(
    results: dict[str, dict[str, Any]], header: str, points: int, tolerance: float
) -> str:
    parts = [header, "", summary_table(results, points, tolerance)]
    for task, by_optimizer in results.items():
        for key in ("final_train_loss", "final_val_loss"):
            parts += [f"{task}: {key.replace('_', ' ')} per lr", "", loss_matrix(by_optimizer, key)]
    return "\n".join(parts)


def log_to_wandb(config: dict[str, Any], results: dict[str, dict[str, Any]], png: Path) -> None:
    """One W&B run: the config, every training curve (seed 0), the summary and the plot."""
    import wandb

    from optiforge.callbacks.wandb_logger import resolve_wandb_mode

    run = wandb.init(
        project="optiforge",
        job_type="benchmark",
        name="scion_lr_sweep",
        mode=resolve_wandb_mode("auto"),
        config=config,
    )
    for task, by_optimizer in results.items():
        for name, row in by_optimizer.items():
            steps = [5 * i for i in range(len(row["curves_seed0"][0]))]
            run.log(
                {
                    f"{task}/{name}/curves": wandb.plot.line_series(
                        xs=steps,
                        ys=row["curves_seed0"],
                        keys=[f"lr=2^{k}" for k in row["log2_lrs"]],
                        title=f"{task} {name}: training loss (seed 0)",
                        xname="step",
                    )
                }
            )
            run.summary[f"{task}/{name}/stable_points_train"] = row["stable_points_train"]
            run.summary[f"{task}/{name}/best_final_train_loss"] = row["best_final_train_loss"]
    run.log({"scion_lr_sweep": wandb.Image(str(png))})
    run.finish()
