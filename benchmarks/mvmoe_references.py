"""MVMoE's published solver results checked by our validator, per variant, size and solver.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run mvmoe_references
        [--mvmoe-data Routing-MVMoE/data] [--count N] [--publish]

For every test file `<VARIANT>/<variant><n>_uniform.pkl` under `--mvmoe-data` (not shipped:
the `data` folder of a clone of https://github.com/RoyalSkye/Routing-MVMoE), every result file
beside it is read (`optiforge.problems.vrp.mvmoe_files.solver_summary`): its mean reported
cost (the file's own cost field, over the entries with a solution), the validator's mean cost
over the solutions it accepts, the largest |reported - validated| over those, and how many it
accepts, rejects (per violated constraint) or finds without a solution; `best` is the reference
`load_mvmoe_set` uses (the lowest validated cost per instance). Result files whose test file
is absent are listed. Writes mvmoe_references.{json,md} (published: benchmarks/results); the
validator is the one of the commit the provenance records.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.problems.vrp.mvmoe_files import TEST_FILE, best_costs, file_name, solver_summary
from optiforge.problems.vrp.mvmoe_solutions import SolverCosts, finite_mean
from optiforge.problems.vrp.variants import ALL_VARIANTS

VALIDATOR = "problems/vrp/validator.py"
HEADER = (
    "| variant | n | instances | solver | reported mean | validated mean | max abs diff "
    "| valid | rejected | unsolved | rejected by constraint |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def _number(value: float) -> float | None:
    """JSON-safe: NaN -> None."""
    return None if np.isnan(value) else value


def _row(name: str, size: int, costs: SolverCosts) -> dict[str, object]:
    return {
        "variant": name,
        "n": size,
        "instances": int(costs.reported.size),
        "solver": costs.solver,
        "reported_mean": _number(costs.reported_mean),
        "validated_mean": _number(costs.validated_mean),
        "max_abs_diff": _number(costs.max_cost_difference),
        "valid": costs.valid,
        "rejected": costs.infeasible,
        "unsolved": costs.unsolved,
        "reasons": costs.reasons,
    }


def _best_row(name: str, size: int, summary: list[SolverCosts]) -> dict[str, object]:
    """The reference of `load_mvmoe_set` (reference="best"): lowest validated cost."""
    best = best_costs([costs.validated for costs in summary], summary[0].validated.size)
    return {
        "variant": name,
        "n": size,
        "instances": int(best.size),
        "solver": "best",
        "reported_mean": None,
        "validated_mean": _number(finite_mean(best)),
        "max_abs_diff": None,
        "valid": int(np.isfinite(best).sum()),
        "rejected": None,
        "unsolved": None,
        "reasons": {},
    }


def sets(mvmoe_dir: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """(variant, size) of every test file, and the result files whose test file is absent."""
    found, orphans = [], []
    for name in ALL_VARIANTS:
        folder = mvmoe_dir / name
        sizes = sorted(
            int(re.sub(r"\D", "", path.name))
            for path in folder.glob("*_uniform.pkl")
            if TEST_FILE.fullmatch(path.name)
        )
        found += [(name, size) for size in sizes]
        for path in sorted(folder.glob("*_uniform.pkl")):
            test = re.search(r"_([a-z]+\d+_uniform\.pkl)$", path.name)
            if test and not (folder / test.group(1)).is_file():
                orphans.append(f"{name}/{path.name}")
    return found, orphans


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if value < 1e-3 else f"{value:.4f}"
    if isinstance(value, dict):
        return ", ".join(f"{key} {count}" for key, count in value.items()) or "-"
    return str(value)


def markdown(rows: list[dict[str, object]], orphans: list[str]) -> str:
    """One line per (variant, size, result file), and the orphaned result files."""
    lines = [
        "# MVMoE's test sets: published solver results under our validator",
        "",
        f"Validator: {VALIDATOR} at the commit below. Costs in MVMoE's units (unit "
        "square). `reported`: the file's cost field over the entries with a solution; "
        "`validated`: our validator's cost over the solutions it accepts; `max abs diff`: "
        "largest |reported - validated| over those; `best`: the per-instance reference of "
        "`load_mvmoe_set` (lowest validated cost over the result files).",
        "",
        HEADER,
        *("| " + " | ".join(_cell(value) for value in row.values()) + " |" for row in rows),
        "",
        f"Result files without their test file ({len(orphans)}): " + (", ".join(orphans) or "none"),
        "",
    ]
    return "\n".join(lines)


@dataclass
class Config:
    """MVMoE's data folder; `count` > 0 reads only the first `count` instances of each file."""

    mvmoe_data: Path = Path("Routing-MVMoE/data")
    count: int = 0


def run(run: Run, args: Config) -> None:
    """Every test file's result files through the validator, then the table."""
    found, orphans = sets(args.mvmoe_data)
    rows = []
    for name, size in found:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the table counts what the warnings say
            summary = solver_summary(args.mvmoe_data, name, size, args.count or None)
        rows += [_row(name, size, costs) for costs in summary]
        if summary:
            rows.append(_best_row(name, size, summary))
        run.log(f"{name} n={size} ({file_name(name, size)}): {len(summary)} result files")
    payload = {"rows": rows, "result_files_without_test_file": orphans}
    run.write("mvmoe_references", payload, markdown(rows, orphans), indent=2)


BENCHMARK = Benchmark(
    "mvmoe_references",
    run,
    Config,
    smoke=dict(count=4),
    nonnegative=("count",),
    external=("mvmoe_data",),
)

if __name__ == "__main__":
    BENCHMARK.main()
