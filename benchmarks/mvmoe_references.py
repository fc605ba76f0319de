"""MVMoE's published solver results checked by our validator, per variant, size and solver.

    python -m optiforge.benchmarks.mvmoe_references --mvmoe_dir /path/to/Routing-MVMoE/data
        [--count N]

For every test file `<VARIANT>/<variant><n>_uniform.pkl` under `--mvmoe_dir` (not shipped: the
files of github.com/RoyalSkye/Routing-MVMoE, `data/`), every result file beside it is read
(`optiforge.problems.vrp.mvmoe_files.solver_summary`): its mean reported cost (the file's own cost
field, over the entries with a solution), the validator's mean cost over the solutions it accepts,
the largest |reported - validated| over those, and how many it accepts, rejects (per violated
constraint) or finds without a solution; `best` is the reference `load_mvmoe_set` uses (the lowest
validated cost per instance). Result files whose test file is absent are listed. Writes
benchmarks/results/mvmoe_references.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import warnings
from pathlib import Path

import numpy as np

from optiforge.benchmarks.harness.checks import check_arguments
from optiforge.problems.vrp.mvmoe_files import TEST_FILE, best_costs, file_name, solver_summary
from optiforge.problems.vrp.mvmoe_solutions import SolverCosts, finite_mean
from optiforge.problems.vrp.variants import ALL_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
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


def markdown(rows: list[dict[str, object]], orphans: list[str], validator: str) -> str:
    lines = [
        "# MVMoE's test sets: published solver results under our validator",
        "",
        f"Validator: {VALIDATOR} at {validator}. Costs in MVMoE's units (unit "
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


def _git(*args: str) -> str:
    """Output of `git args` in the project (what the validator was when measured)."""
    run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return run.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mvmoe_dir", type=Path, required=True)
    parser.add_argument("--count", type=int, default=None, help="first N instances (all)")
    args = check_arguments(parser, parser.parse_args())
    if not args.mvmoe_dir.is_dir():
        parser.error(f"--mvmoe_dir: no folder {args.mvmoe_dir}")
    validator = _git("log", "-1", "--format=%h %s", "--", VALIDATOR)[:100]
    if _git("status", "--porcelain", "--", VALIDATOR):
        validator += " + uncommitted changes"
    found, orphans = sets(args.mvmoe_dir)
    rows = []
    for name, size in found:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the table counts what the warnings say
            summary = solver_summary(args.mvmoe_dir, name, size, args.count)
        rows += [_row(name, size, costs) for costs in summary]
        if summary:
            rows.append(_best_row(name, size, summary))
        print(f"{name} n={size} ({file_name(name, size)}): {len(summary)} result files")
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {"validator": validator, "rows": rows, "result_files_without_test_file": orphans}
    (RESULTS / "mvmoe_references.json").write_text(json.dumps(payload, indent=2) + "\n")
    table = markdown(rows, orphans, validator)
    (RESULTS / "mvmoe_references.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
