"""FSNet against the reference solvers used at their best (set up once, warm-started, parallel).

Per family: FSNet trains once (seed 0, the `benchmarks.fsnet` settings, L-BFGS memory 30), then
solves the cached test set as one batch with each evaluation memory of `--test-memories` (30, the
paper's, and 5: the two-loop recursion is most of an iteration's time on CPU); the same
instances are solved by
- the from-scratch reference (`solve_reference`: cvxpy + Clarabel, SLSQP for nonconvex
  families; the column the FSNet page reported its speedups against),
- every parametric solver that takes the family
  (`optiforge.problems.constrained.parametric_solvers`) at each tolerance of a sweep (the solver's
  default first), warm-started, one process,
- per FSNet variant, the "matched" setting: the fastest of the sweep whose points are all
  feasible (1e-6) and whose mean gap is at most that variant's, also run on `--workers`
  processes.
Gaps are relative to the from-scratch reference's objective. Time per instance as the batch
grows (1, 32, 1024 instances) for FSNet (one batch) and for the matched solver (set-up
included). Every point of every method goes through the family's own residuals.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run fsnet_vs_solvers --families convex_qp

writes fsnet_vs_solvers.{json,md}.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

import lightning as L
import numpy as np
import torch

from optiforge.benchmarks.fsnet import Training, build, fit, test
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule
from optiforge.lightning_modules.fsnet import FSNet
from optiforge.problems.constrained import ProblemSpec
from optiforge.problems.constrained.linear import LinearInequalityFamily
from optiforge.problems.constrained.parametric_solvers import ParametricRun, solve_parametric
from optiforge.problems.constrained.reference_solvers import solve_reference

WARM, COLD = True, False
SWEEP = {
    "osqp": [(None, WARM), (1e-4, WARM), (1e-5, WARM), (1e-6, WARM), (1e-7, WARM)],
    "clarabel": [(None, COLD), (1e-5, COLD), (1e-3, COLD)],
    "cvxpy": [(None, WARM), (1e-5, WARM), (1e-3, WARM)],
    # warm starts move SLSQP to another local optimum (tests): both are reported
    "slsqp": [(None, WARM), (None, COLD), (1e-4, COLD), (1e-9, COLD)],
}


def solvers_for(family: object) -> list[str]:
    """The parametric solvers that take `family`."""
    if not family.is_convex:
        return ["slsqp"]
    if isinstance(family, LinearInequalityFamily):
        return ["osqp", "clarabel"]
    return ["cvxpy"]


def summary(run: ParametricRun, reference: np.ndarray) -> dict[str, float]:
    """Wall time, feasibility and gap of one parametric run against the reference objectives."""
    solutions = run.solutions
    gap = (solutions.objectives - reference) / np.abs(reference)
    return {
        "wall_seconds": run.wall_seconds,
        "setup_seconds": run.setup_seconds,
        "feasible": float(solutions.accepted.mean()),
        "gap_mean": float(np.nanmean(gap)),
        "gap_max": float(np.nanmax(gap)),
        "max_eq": float(solutions.max_eq_violation.max()),
        "max_ineq": float(solutions.max_ineq_violation.max()),
    }


def fsnet_times(model: object, x: torch.Tensor, sizes: list[int]) -> dict[int, float]:
    """Seconds per instance of FSNet solving the first `size` instances as one batch (after one
    untimed warm-up solve)."""
    model.timed_solve(x[:1])
    return {size: model.timed_solve(x[:size])[1] / size for size in sizes}


def profile_feasibility(model: object, x: torch.Tensor) -> dict[str, float]:
    """Where FSNet's batch time goes: the network, the feasibility step, its iterations (the
    batch runs until its slowest row is feasible) and violation evaluations (one per gradient,
    one per line-search trial, the later trials on the still-backtracking rows only)."""
    calls = [0]

    def violation(y: torch.Tensor, rows_x: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        return model.family.squared_violation(y, rows_x)

    with torch.no_grad():
        start = time.perf_counter()
        predicted = model.predictor(x)
        network = time.perf_counter() - start
    start = time.perf_counter()
    result = model.test_seeker(violation, predicted, x)
    seconds = time.perf_counter() - start
    return {
        "network_seconds": network,
        "feasibility_seconds": seconds,
        "iterations": result.iterations,
        "violation_evaluations": calls[0],
        "seconds_per_iteration": seconds / max(1, result.iterations),
    }


def fsnet_variant(model: FSNet, problem: ProblemSpec, args: Config, memory: int):
    """The trained `model` with `memory` curvature pairs in its evaluation solve."""
    variant = build("fsnet", problem, args, test_memory=memory)
    variant.load_state_dict(model.state_dict())
    return variant


def batch_sizes(requested: list[int], available: int) -> list[int]:
    """The requested batch sizes, each capped at the test instances left after the references
    that failed their check are dropped (so times are divided by the instances solved)."""
    return sorted({min(size, available) for size in requested})


def run_fsnet(trainer, model, data, x: torch.Tensor, sizes: list[int]) -> dict:
    """Test metrics, time per instance as the batch grows and the profile of one variant."""
    result = test(trainer, model, data)
    result["per_instance"] = fsnet_times(model, x, sizes)
    result["profile"] = profile_feasibility(model, x)
    return result


def matched_setting(row: dict, gap: float) -> tuple[str, dict] | None:
    """The fastest solver setting with every point feasible and a mean gap <= `gap`."""
    matched = [
        (key, result)
        for key, result in row["solvers"].items()
        if result["feasible"] == 1.0 and result["gap_mean"] <= gap
    ]
    return min(matched, key=lambda item: item[1]["wall_seconds"]) if matched else None


def run_matched(
    family, x: torch.Tensor, key: str, result: dict, sizes: list[int], workers: int
) -> dict:
    """The matched setting on `--workers` processes and per instance as the batch grows."""
    solver, tolerance, start = key.split()
    setting = (solver, None if tolerance == "default" else float(tolerance), start == "warm")
    parallel = solve_parametric(family, x, *setting, workers=workers)
    scaling = {
        size: solve_parametric(family, x[:size], *setting).wall_seconds / size for size in sizes
    }
    return {
        "setting": key,
        "wall_seconds": result["wall_seconds"],
        "parallel_seconds": parallel.wall_seconds,
        "per_instance": scaling,
    }


def run_family(name: str, args: Config) -> dict:
    """Train FSNet once, then time it (each evaluation memory) and every solver setting on the
    family's test set."""
    problem = ProblemSpec(name, num_vars=args.num_vars, num_eq=args.num_eq, num_ineq=args.num_ineq)
    data = ConstrainedProblemDataModule(
        problem,
        train_size=args.train_size,
        val_size=1,
        test_size=args.test_size,
        batch_size=args.batch,
        eval_batch_size=args.test_size,
        cache_dir=str(args.cache_dir),
    )
    data.prepare_data()
    data.setup("fit")
    x = data.datasets["test"].tensors[0]
    family = data.family
    scratch = solve_reference(family, x)
    reference = scratch.objectives
    L.seed_everything(0, verbose=False)
    model = build("fsnet", problem, args)
    trainer, train_seconds = fit(model, data, args.epochs, args.lr)
    sizes = batch_sizes(args.batch_sizes, len(x))
    row: dict = {
        "test_instances": len(x),
        "rejected_references": data.rejected["test"],
        "batch_sizes": sizes,
        "train_seconds": train_seconds,
        "fsnet": {},
        "scratch": {"wall_seconds": float(scratch.solve_times.sum()), "solver": scratch.solver},
        "solvers": {},
        "matched": {},
    }
    for memory in args.test_memories:
        variant = fsnet_variant(model, problem, args, memory)
        row["fsnet"][memory] = run_fsnet(trainer, variant, data, x, sizes)
        print(name, "fsnet memory", memory, json.dumps(row["fsnet"][memory]), flush=True)
    for solver in solvers_for(family):
        for tolerance, warm in SWEEP[solver]:
            result = summary(solve_parametric(family, x, solver, tolerance, warm), reference)
            key = f"{solver} {tolerance or 'default'} {'warm' if warm else 'cold'}"
            row["solvers"][key] = result
            print(name, key, json.dumps(result), flush=True)
    for fsnet in row["fsnet"].values():
        found = matched_setting(row, fsnet["objective_gap_mean"])
        if found is None:
            continue
        key, result = found
        if key not in row["matched"]:
            row["matched"][key] = run_matched(family, x, key, result, sizes, args.workers)
            print(name, "matched", json.dumps(row["matched"][key]), flush=True)
        fsnet["matched"] = key
    return row


def matched_lines(row: dict, memory: int, args: Config) -> list[str]:
    """The matched solver of one FSNet variant on several processes and the per-instance times
    as the batch grows."""
    fsnet = row["fsnet"][memory]
    if "matched" not in fsnet:
        return [
            f"FSNet memory {memory}: no solver setting matched its gap with every point feasible.",
            "",
        ]
    matched = row["matched"][fsnet["matched"]]
    lines = [
        f"FSNet memory {memory} ({fsnet['batch_seconds']:.3f} s, gap "
        f"{fsnet['objective_gap_mean']:.2e}) against its matched setting "
        f"{matched['setting']}: {matched['wall_seconds'] / fsnet['batch_seconds']:.1f}x on one "
        f"process, {matched['parallel_seconds'] / fsnet['batch_seconds']:.1f}x against "
        f"{args.workers} processes ({matched['parallel_seconds']:.2f} s).",
        "",
        f"| instances | FSNet memory {memory} ms / instance | matched solver ms / instance |",
        "|---|---|---|",
    ]
    for size in row["batch_sizes"]:
        lines.append(
            f"| {size} | {1e3 * fsnet['per_instance'][size]:.3f} | "
            f"{1e3 * matched['per_instance'][size]:.3f} |"
        )
    return [*lines, ""]


def profile_lines(profile: dict[str, float], memory: int, batch: int) -> list[str]:
    """One sentence on where FSNet's batch time goes."""
    return [
        f"FSNet memory {memory}, batch of {batch}: network {profile['network_seconds']:.3f} s, "
        f"feasibility step {profile['feasibility_seconds']:.3f} s = "
        f"{profile['iterations']} L-BFGS iterations x "
        f"{1e3 * profile['seconds_per_iteration']:.1f} ms "
        f"({profile['violation_evaluations']} violation evaluations incl. line search).",
        "",
    ]


def markdown(results: dict, args: Config) -> str:
    """The per-family tables: every FSNet variant and solver setting, then the speedups against
    the matched settings and the batch scaling."""
    lines = [
        f"FSNet vs solvers at their best: {args.num_vars} variables, {args.num_eq} equalities, "
        f"{args.num_ineq} inequalities; {args.test_size} test instances drawn; FSNet {args.epochs} "
        f"epochs (L-BFGS memory 30 in training), seed 0, evaluated with L-BFGS memory "
        f"{' and '.join(map(str, args.test_memories))}; one thread per process; gaps vs the "
        "from-scratch reference; the third column is each time over the first FSNet row's "
        "(above 1: FSNet is that many times faster).",
        "",
    ]
    for name, row in results.items():
        first = row["fsnet"][args.test_memories[0]]["batch_seconds"]
        scratch = row["scratch"]
        lines += [
            f"### {name}",
            "",
            f"{row['test_instances']} test instances solved ({row['rejected_references']} left "
            f"out: their reference failed its check). FSNet trained in "
            f"{row['train_seconds']:.0f} s.",
            "",
            f"| method | seconds for the batch | time / FSNet memory {args.test_memories[0]} | "
            "feasible | gap mean | gap max |",
            "|---|---|---|---|---|---|",
        ]
        for memory, fsnet in row["fsnet"].items():
            lines.append(
                f"| FSNet (one batch, memory {memory}) | {fsnet['batch_seconds']:.3f} | "
                f"{fsnet['batch_seconds'] / first:.1f}x | {fsnet['feasible_rate']:.3f} | "
                f"{fsnet['objective_gap_mean']:.2e} | {fsnet['objective_gap_max']:.2e} |"
            )
        lines.append(
            f"| from scratch ({scratch['solver']}, reference) | {scratch['wall_seconds']:.2f} | "
            f"{scratch['wall_seconds'] / first:.1f}x | 1.000 | 0 | 0 |"
        )
        for key, result in row["solvers"].items():
            lines.append(
                f"| {key} | {result['wall_seconds']:.2f} | {result['wall_seconds'] / first:.1f}x"
                f" | {result['feasible']:.3f} | {result['gap_mean']:.1e} | "
                f"{result['gap_max']:.1e} |"
            )
        lines.append("")
        for memory, fsnet in row["fsnet"].items():
            lines += matched_lines(row, memory, args)
            lines += profile_lines(fsnet["profile"], memory, row["test_instances"])
    return "\n".join(lines)


@dataclass(frozen=True)
class Config(Training):
    """Problem size, the L-BFGS memories tested, the solver batch sizes; `output`: the result
    file stem."""

    families: tuple[str, ...] = ("convex_qp",)
    num_vars: int = 100
    num_eq: int = 50
    num_ineq: int = 50
    test_memories: tuple[int, ...] = (30, 5)
    batch_sizes: tuple[int, ...] = (1, 32, 1024)
    workers: int = 2
    output: str = "fsnet_vs_solvers"


def main(run: Run, args: Config) -> None:
    """Run the families, write the tables."""
    torch.set_num_threads(1)
    results = {name: run_family(name, args) for name in args.families}
    run.write(args.output, {"args": asdict(args), "results": results}, markdown(results, args))


BENCHMARK = Benchmark(
    "fsnet_vs_solvers",
    main,
    Config,
    smoke=dict(num_vars=6, num_eq=2, num_ineq=2, epochs=1, train_size=32, batch=16, test_size=4,
               test_memories=(5,), batch_sizes=(1, 8), workers=1),
)  # fmt: skip

if __name__ == "__main__":
    BENCHMARK.main()
