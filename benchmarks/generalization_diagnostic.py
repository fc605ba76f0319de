"""The generalization diagnostic on a stable and an unstable algorithm: strongly L2-regularized
logistic regression and 1-nearest-neighbour on digits, over a collection of distributions (the
training labels' symmetric noise rate in 0, 0.1, 0.2, 0.3; the held-out split stays clean).

"Which Algorithms Have Tight Generalization Bounds?" (Gastpar, Nachum, Shafer, Weinberger)
predicts a tight bound for the loss-stable algorithm and none for the interpolating one: the
training loss of 1-NN is 0 whatever the noise, so it tells nothing about the population loss.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run generalization_diagnostic
        --algorithm logreg_l2
    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run generalization_diagnostic --algorithm 1nn

Each call retrains one algorithm `--retrainings` times through train.py (about 6 s a run),
stores its entry in generalization_diagnostic.json beside the other algorithm's (taken from the
run folder, else the published file) and writes generalization_diagnostic.md (one table).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from optiforge.algorithms.generalization import Distributions, diagnose
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.harness.registry import RESULTS

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
    if not chosen:  # fewer retrainings than distribution values
        return "-"
    train = sum(run["train_loss"] for run in chosen) / len(chosen)
    test = sum(run["test_loss"] for run in chosen) / len(chosen)
    return f"{train:.3f} / {test:.3f}"


@dataclass(frozen=True)
class Config:
    algorithm: Literal["1nn", "logreg_l2"] = "logreg_l2"
    retrainings: int = 20
    workers: int = 1
    delta: float = 0.1


def main(run: Run, args: Config) -> None:
    """Diagnose one algorithm; the table holds it beside the other algorithm's stored entry
    (from this run's folder, else the published file), each entry with its own provenance."""
    diagnosis = diagnose(
        [CONFIGS / "base.yaml", CONFIGS / ALGORITHMS[args.algorithm][1]],
        args.retrainings,
        workers=args.workers,
        delta=args.delta,
        distributions=NOISE,
    )
    stored = next(
        (p for p in (run.out_dir / f"{STEM}.json", RESULTS / f"{STEM}.json") if p.is_file()), None
    )
    entries = json.loads(stored.read_text()) if stored else {}
    earlier = entries.pop("provenance", None)
    for entry in entries.values():
        entry.setdefault("provenance", earlier)
    entries[args.algorithm] = diagnosis.to_json()
    entries[args.algorithm]["configs"] = [
        str(Path(path).relative_to(CONFIGS.parents[1])) for path in diagnosis.configs
    ]
    entries[args.algorithm]["provenance"] = run.provenance
    run.write(STEM, entries, table(entries))


BENCHMARK = Benchmark("generalization_diagnostic", main, Config, smoke=dict(retrainings=3))

if __name__ == "__main__":
    BENCHMARK.main()
