"""Backhaul references on MVMoE's files: published solutions against ours, and the gaps they give.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run mvmoe_backhaul_references
        [--mvmoe-data Routing-MVMoE/data] [--variants VRPB VRPBL OVRPB OVRPBL] [--size 50]
        [--instances 30] [--iterations 500] [--rounds 2000] [--publish]

`--mvmoe-data`: the `data` folder of a clone of https://github.com/RoyalSkye/Routing-MVMoE
(not shipped).

Per variant, on the first `--instances` instances of MVMoE's test file (1 thread):

- published: the lowest cost over MVMoE's result files among the solutions that pass MVMoE's
  rule as given (the validator's default, `route_order="as_given"`), and, for comparison, as a
  set of routes (`"any"`, what the project's validator accepted before);
- PyVRP: `--iterations` iterations, linehaul-first and repaired (`signed_rounds=0`, the former
  reference), then `--rounds` rounds of the signed search (`signed_search`, the reference
  now: `PyVRPSolver(iterations, signed_rounds=rounds)`); every solution validated as given;
- on the instances with a valid published solution: the share where each of ours is worse
  than it, and the mean excess; the reference used for gaps is the lower of ours and the
  published one, so it is never worse than a valid published solution;
- the shipped student (greedy) and MTPOMO (multi-start x 8) gaps: to the former reference
  (min of the as-a-set published solutions and the repaired PyVRP), to the new one, and on the
  published-valid instances to the published solution alone.

Writes mvmoe_backhaul_references_n<size>.{json,md} (published: benchmarks/results).
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.mtlkd_solvers import augment, greedy, load_model
from optiforge.benchmarks.mtlkd_solvers import run as evaluate
from optiforge.problems.vrp.arrays import instance_arrays
from optiforge.problems.vrp.mvmoe_files import as_float32, instance_path, read_instances
from optiforge.problems.vrp.mvmoe_solutions import solver_costs, solver_files
from optiforge.problems.vrp.pyvrp_solver import PyVRPSolver
from optiforge.problems.vrp.route_order import mvmoe_route_order
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.signed_search import improve_signed, routes_to_sequence
from optiforge.problems.vrp.validator import validate_batch


@dataclass
class Config:
    """The files, the instances and the search budgets; `student` / `mtpomo` are weight files
    (a `weights/mtlkd/<name>.pt` path names a shipped file), `models` False: references only."""

    mvmoe_data: Path = Path("Routing-MVMoE/data")
    variants: tuple[str, ...] = ("VRPB", "VRPBL", "OVRPB", "OVRPBL")
    size: int = 50
    instances: int = 30
    iterations: int = 500
    rounds: int = 2000
    student: str = "weights/mtlkd/student_mvmoe_n50.pt"
    mtpomo: str = "weights/mtlkd/mtpomo_mvmoe_n50.pt"
    models: bool = True
    chunk: int = 100


def published(batch, path: Path, route_order: str) -> np.ndarray:
    """Per instance the lowest validated published cost (NaN where none passes)."""
    files = solver_files(path.parent, path.name)
    costs = [np.full(batch.batch_size, np.nan)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stem, file in files.items():
            costs.append(solver_costs(stem, file, batch, route_order=route_order).validated)
    return np.fmin.reduce(costs)


def ours(batch, iterations: int, rounds: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Costs of PyVRP alone (repaired) and after `rounds` signed-search rounds, validated as
    given, and the seconds per instance of each."""
    start = time.perf_counter()
    plain = PyVRPSolver(iterations, signed_rounds=0).solve(batch)
    pyvrp_seconds = (time.perf_counter() - start) / batch.batch_size
    start = time.perf_counter()
    sequences = []
    for row, solution in enumerate(plain):
        arrays = instance_arrays(batch, row)
        routes = improve_signed(arrays, split_routes(solution.sequence), rounds, seed=0)
        ordered = mvmoe_route_order(
            torch.from_numpy(routes_to_sequence(routes))[None],
            torch.from_numpy(arrays["linehaul_demand"])[None],
            torch.ones(1, dtype=torch.bool),
        )
        sequences.append(ordered[0].numpy())
    search_seconds = (time.perf_counter() - start) / batch.batch_size
    before = validate_batch(batch, [s.sequence for s in plain])
    return before, validate_batch(batch, sequences), pyvrp_seconds, search_seconds


def gap(cost: np.ndarray, reference: np.ndarray, rows: np.ndarray) -> float:
    """Mean percentage gap of `cost` to `reference` over the selected rows."""
    return float(np.mean(100.0 * (cost[rows] - reference[rows]) / reference[rows]))


def variant_row(name: str, models: dict, args: Config) -> dict:
    """The references and the models' gaps on one variant's file."""
    path = instance_path(args.mvmoe_data, name, args.size)
    batch = read_instances(path, name, args.size, args.instances)
    as_given, as_set = published(batch, path, "as_given"), published(batch, path, "any")
    before, after, pyvrp_s, search_s = ours(batch, args.iterations, args.rounds)
    valid = np.isfinite(as_given)
    everything = np.ones(batch.batch_size, dtype=bool)
    former, reference = np.fmin(as_set, before), np.fmin(as_given, after)
    row = {
        "instances": batch.batch_size,
        "published valid as given": int(valid.sum()),
        "published valid as a set": int(np.isfinite(as_set).sum()),
        "PyVRP repaired mean": float(before.mean()),
        "PyVRP + search mean": float(after.mean()),
        "PyVRP s / instance": pyvrp_s,
        "search s / instance": search_s,
        "PyVRP repaired worse than published": int((before[valid] > as_given[valid]).sum()),
        "PyVRP + search worse than published": int((after[valid] > as_given[valid]).sum()),
        "reference worse than published": int((reference[valid] > as_given[valid]).sum()),
        "PyVRP repaired over published %": gap(before, as_given, valid) if valid.any() else None,
        "PyVRP + search over published %": gap(after, as_given, valid) if valid.any() else None,
        "former reference over new %": gap(former, reference, everything),
    }
    instances = as_float32(batch)  # what the models read, as in `load_mvmoe_set`
    for label, (model, mode) in models.items():
        solver = greedy(model) if mode == "greedy" else augment(model)
        cost = evaluate(solver, instances, args.chunk, label)["cost"]
        row[f"{label}: feasible as given"] = float(np.isfinite(cost).mean())
        row[f"{label}: gap to former reference %"] = gap(cost, former, everything)
        row[f"{label}: gap to new reference %"] = gap(cost, reference, everything)
        if valid.any():
            row[f"{label}: gap to published, valid subset %"] = gap(cost, as_given, valid)
            row[f"{label}: gap to former reference, same subset %"] = gap(cost, former, valid)
    Run.log(f"{name} {json.dumps(row)}")
    return row


def markdown(rows: dict[str, dict], args: Config) -> str:
    """One column per variant, one line per quantity."""
    keys = list(next(iter(rows.values())))
    lines = [
        f"MVMoE backhaul references, n = {args.size}, first {args.instances} instances per file, "
        f"PyVRP {args.iterations} iterations, signed search {args.rounds} rounds, 1 thread",
        "",
        "| quantity | " + " | ".join(rows) + " |",
        "|---" * (len(rows) + 1) + "|",
    ]
    for key in keys:
        cells = []
        for row in rows.values():
            value = row.get(key)
            cells.append(
                "" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
            )
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run(run: Run, args: Config) -> None:
    """Every variant's row, then the table."""
    torch.set_num_threads(1)
    models = {}
    if args.models:
        models = {
            "student greedy": (load_model(Path(args.student)), "greedy"),
            "MTPOMO x8": (load_model(Path(args.mtpomo)), "augment"),
        }
    rows = {name: variant_row(name, models, args) for name in args.variants}
    settings = {key: str(value) for key, value in asdict(args).items()}
    settings["mvmoe_data"] = "<MVMoE data folder>"  # no machine path in a published file
    payload = {"settings": settings, "rows": rows}
    run.write(f"mvmoe_backhaul_references_n{args.size}", payload, markdown(rows, args), indent=2)


BENCHMARK = Benchmark(
    "mvmoe_backhaul_references",
    run,
    Config,
    smoke=dict(variants=("VRPB",), instances=2, iterations=20, rounds=20, models=False),
    external=("mvmoe_data",),
)

if __name__ == "__main__":
    BENCHMARK.main()
