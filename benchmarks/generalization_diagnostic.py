"""The generalization diagnostic on a stable and an unstable algorithm: strongly L2-regularized
logistic regression and 1-nearest-neighbour on digits, over a collection of distributions (the
training labels' symmetric noise rate in 0, 0.1, 0.2, 0.3; the held-out split stays clean).

"Which Algorithms Have Tight Generalization Bounds?" (Gastpar, Nachum, Shafer, Weinberger)
predicts a tight bound for the loss-stable algorithm and none for the interpolating one: the
training loss of 1-NN is 0 whatever the noise, so it tells nothing about the population loss.

    OMP_NUM_THREADS=1 python -m benchmarks.generalization_diagnostic --algorithm logreg_l2
    OMP_NUM_THREADS=1 python -m benchmarks.generalization_diagnostic --algorithm 1nn

Each call retrains one algorithm `--retrainings` times through train.py (about 6 s a run),
stores its entry in benchmarks/results/generalization_diagnostic.json and rewrites
benchmarks/results/generalization_diagnostic.md from every stored entry (one table).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.figures import RESULTS
from optiforge.algorithms.generalization import Distributions, diagnose

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "generalization"
ALGORITHMS = {
    "logreg_l2": ("logistic regression, weight decay 0.05 (stable)", "digits_logreg_l2.yaml"),
    "1nn": ("1-nearest-neighbour (interpolating)", "digits_1nn.yaml"),
}
NOISE = Distributions("data.init_args.label_noise", ("0.0", "0.1", "0.2", "0.3"))
STEM = "generalization_diagnostic"


def table(entries: dict[str, Any]) -> str:
    """One markdown table over the stored algorithms."""
    lines = [
        "| algorithm | K | train loss | test loss | measured gap (sd) | V_T | bound sqrt(V_T/delta)"
        " | ignoring the run | wall time (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ALGORITHMS:
        if name not in entries:
            continue
        e = entries[name]["estimate"]
        lines.append(
            f"| {ALGORITHMS[name][0]} | {e['retrainings']} | {e['train_loss']:.3f} "
            f"| {e['test_loss']:.3f} | {e['gap']:+.3f} ({e['gap_std']:.3f}) "
            f"| {e['conditional_variance']:.2e} | {e['bound']:.3f} "
            f"| {e['uninformed_bound']:.3f} | {entries[name]['wall_seconds']:.0f} |"
        )
    delta = next(iter(entries.values()))["estimate"]["delta"] if entries else None
    lines += [
        "",
        f"0-1 loss (1 - accuracy); delta = {delta}; label noise of the training split cycled "
        f"over {', '.join(NOISE.values)}; test loss on the clean held-out split.",
        "",
        "Mean train / test loss per label-noise rate:",
        "",
        "| algorithm | " + " | ".join(f"noise {value}" for value in NOISE.values) + " |",
        "|---|" + "---|" * len(NOISE.values),
    ]
    for name in ALGORITHMS:
        if name in entries:
            cells = [per_distribution(entries[name]["runs"], value) for value in NOISE.values]
            lines.append(f"| {ALGORITHMS[name][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def per_distribution(runs: list[dict[str, Any]], value: str) -> str:
    """Mean training and test loss of the runs drawn with one distribution value."""
    chosen = [run for run in runs if run["distribution"] == value]
    train = sum(run["train_loss"] for run in chosen) / len(chosen)
    test = sum(run["test_loss"] for run in chosen) / len(chosen)
    return f"{train:.3f} / {test:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=sorted(ALGORITHMS), required=True)
    parser.add_argument("--retrainings", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--delta", type=float, default=0.1)
    args = parser.parse_args()
    diagnosis = diagnose(
        [CONFIGS / ALGORITHMS[args.algorithm][1]],
        args.retrainings,
        workers=args.workers,
        delta=args.delta,
        distributions=NOISE,
    )
    json_path, md_path = RESULTS / f"{STEM}.json", RESULTS / f"{STEM}.md"
    entries = json.loads(json_path.read_text()) if json_path.is_file() else {}
    entries[args.algorithm] = diagnosis.to_json()
    entries[args.algorithm]["configs"] = [
        str(Path(path).relative_to(CONFIGS.parents[1])) for path in diagnosis.configs
    ]
    json_path.write_text(json.dumps(entries, indent=1) + "\n")
    md_path.write_text(table(entries))
    print(table(entries))


if __name__ == "__main__":
    main()
