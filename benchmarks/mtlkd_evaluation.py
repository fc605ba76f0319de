"""MTL-KD evaluation: the student against the MTPOMO-style baseline and the single-task teachers.

    python -m optiforge.benchmarks run mtlkd_evaluation [--student weights/mtlkd/student_n50.pt]
        [--mtpomo weights/mtlkd/mtpomo_n50.pt] [--parts suite r3c generalization cvrplib real]

Models are weights files (`optiforge.lightning_modules.mtlkd.policy_weights`) or Lightning
checkpoints. Every solution is checked by the independent validator
(`optiforge.problems.vrp.validator`); gaps are over validated costs, and each row reports its
feasibility rate. Parts:

- suite: the 16 variants at n = `--size`, `--instances` seeded test instances each (the
  VRPDataModule's cached test sets; PyVRP references of `--seen-iterations` iterations per instance
  for the 6 seen variants and `--unseen-iterations` for the 10 unseen ones): greedy decoding of the
  student and of MTPOMO; on the first `--augment-instances` of them (POMO inference costs
  400 rollouts per instance) MTPOMO with multi-start x 8 augmentations and, on the seen
  variants, their teacher (multi-start x 8); `--augment-instances 0` skips them. Mean gaps
  over the seen and the unseen variants. (`--r3c-instances 0`, `--large-r3c 0`: no R3C.)
- r3c: the student's greedy solutions of the first `--r3c-instances` instances of every suite
  variant improved by R3C, validated after each budget in `--r3c-budgets` (rounds).
- generalization: student and MTPOMO greedy (and student + `--large-r3c` R3C rounds) on
  `--general-variants` at each size of `--general-sizes` (instances and PyVRP seconds per size
  from `--general-instances` / `--general-iterations`), with the peak resident memory added while
  decoding (sampled every 5 ms) and the time per instance.
- cvrplib: student greedy, student + `--large-r3c` R3C rounds and MTPOMO greedy on the first
  `--x-instances` (default all 100) CVRPLIB Set X instances by size, grouped n <= 250, 251-500,
  501-1000; costs in the instance's own units and rounding (`cvrplib.route_cost`), gap to BKS.
- real: the same on the first `--real-instances` (default all) VRPB and VRPTW instances.

Writes mtlkd_<part>.{json,md} (suite and r3c with the size: mtlkd_suite_n50) and the figures of
r3c and generalization (published: benchmarks/results, docs/figures); `--wandb` also logs the
tables as one W&B run (offline without a key).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.mtlkd_figures import draw_from_json
from optiforge.benchmarks.mtlkd_solvers import (
    Solver,
    augment,
    gap_summary,
    greedy,
    load_model,
    run,
    with_r3c,
)
from optiforge.benchmarks.mtlkd_tables import markdown
from optiforge.benchmarks.wandb_tables import log_tables
from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules.mtlkd.policy_weights import (
    build_module,
    resolve_weights,
    shipped_teacher_path,
)
from optiforge.lightning_modules.mtlkd.r3c import r3c
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule
from optiforge.problems.vrp import cvrplib
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS

SKIPPED_AT_0 = ("augment_instances", "r3c_instances", "large_r3c")  # 0 skips these parts
UNSEEN_VARIANTS = tuple(name for name in ALL_VARIANTS if name not in SEEN_VARIANTS)
Part = Literal["suite", "r3c", "generalization", "cvrplib", "real"]
PARTS: tuple[Part, ...] = ("suite", "r3c", "generalization", "cvrplib", "real")
BANDS = ((0, 250), (251, 500), (501, 1000))


def test_set(
    name: str, size: int, count: int, iterations: int, cache_dir: Path
) -> tuple[VRPBatch, np.ndarray]:
    """The cached seeded test set (built with PyVRP references on first use, 2 workers)."""
    data = VRPDataModule(
        train_variants=name,
        num_customers=size,
        eval_variants=[name],
        test_instances=count,
        reference_iterations=iterations,
        reference_workers=2,
        cache_dir=str(cache_dir),
    )
    data.prepare_split("test")
    loaded = data.load_set("test", name, size)
    return loaded.instances, loaded.reference_cost.numpy()


def suite(models: dict[str, VRPEvaluationModule], args: Config) -> dict:
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for name in ALL_VARIANTS:
        seen = name in SEEN_VARIANTS
        budget = args.seen_iterations if seen else args.unseen_iterations
        instances, reference = test_set(name, args.size, args.instances, budget, args.cache_dir)
        solvers = {
            "student greedy": greedy(models["student"]),
            "MTPOMO greedy": greedy(models["mtpomo"]),
        }
        rows[name] = {
            method: gap_summary(run(solver, instances, args.chunk, method), reference)
            for method, solver in solvers.items()
        }
        first = slice(0, args.augment_instances)
        augmented = {"MTPOMO x8 aug": augment(models["mtpomo"])} if args.augment_instances else {}
        if seen and args.augment_instances:
            teacher = build_module(shipped_teacher_path(name, convention="routefinder"))
            augmented["teacher x8 aug"] = augment(teacher)
        for method, solver in augmented.items():
            result = run(solver, instances.index(first), args.chunk, method)
            rows[name][method] = gap_summary(result, reference[first])
        Run.log(f"{name} gaps: " + str({m: round(r["gap"], 2) for m, r in rows[name].items()}))
    methods = [m for m in ("student greedy", "MTPOMO greedy", "MTPOMO x8 aug") if m in rows["CVRP"]]
    means = {
        group: {m: float(np.mean([rows[v][m]["gap"] for v in names])) for m in methods}
        for group, names in (("seen", SEEN_VARIANTS), ("unseen", UNSEEN_VARIANTS))
    }
    return {"rows": rows, "means": means}


def r3c_curve(models: dict[str, VRPEvaluationModule], args: Config) -> dict:
    """Gap after each cumulative R3C budget, per variant; every stage validated."""
    student = models["student"]
    rows: dict[str, dict[str, float]] = {}
    for name in ALL_VARIANTS:
        budget = args.seen_iterations if name in SEEN_VARIANTS else args.unseen_iterations
        instances, reference = test_set(name, args.size, args.instances, budget, args.cache_dir)
        instances = instances.index(slice(0, args.r3c_instances))
        reference = reference[: args.r3c_instances]
        rows[name] = r3c_stages(student, instances, reference, args)
        Run.log(f"{name} " + str({k: round(v, 2) for k, v in rows[name].items()}))
    return {"rows": rows, "budgets": list(args.r3c_budgets)}


def r3c_stages(
    student: VRPEvaluationModule, instances: VRPBatch, reference: np.ndarray, args
) -> dict[str, float]:
    """Greedy, then R3C continued budget by budget; gap (%) and feasibility at each stage."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        solutions = student.solve(instances, "greedy", r3c_iterations=0)
    out, done, seconds = {}, 0, 0.0
    for budget in (0, *args.r3c_budgets):
        start = time.perf_counter()
        if budget > done:
            with torch.no_grad():
                solutions = r3c(
                    student.policy, instances, solutions, budget - done, args.segment, generator
                )[0]
            done = budget
        seconds += time.perf_counter() - start
        cost = validate_batch(instances, solutions, "warn", f"student + R3C {budget}")
        gap = 100.0 * (cost - reference) / reference
        out[f"gap@{budget}"] = float(np.nanmean(gap))
        out[f"feasible@{budget}"] = float(np.isfinite(cost).mean())
        out[f"ms@{budget}"] = 1e3 * seconds / instances.batch_size
    return out


def generalization(models: dict[str, VRPEvaluationModule], args: Config) -> dict:
    budget = args.large_r3c
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for name in args.general_variants:
        for size, count, iterations in zip(
            args.general_sizes, args.general_instances, args.general_iterations, strict=True
        ):
            instances, reference = test_set(name, size, count, iterations, args.cache_dir)
            chunk = max(1, min(args.chunk, 4096 // size))
            solvers = {
                "student greedy": greedy(models["student"]),
                "MTPOMO greedy": greedy(models["mtpomo"]),
                f"student + R3C {budget}": with_r3c(models["student"], budget),
            }
            rows[f"{name}/n{size}"] = {
                method: gap_summary(run(solver, instances, chunk, method), reference)
                for method, solver in solvers.items()
            }
            Run.log(f"{name} {size} " + str(rows[f"{name}/n{size}"]))
    return {"rows": rows}


def benchmark_solver(
    solver: Solver, instance: cvrplib.BenchmarkInstance
) -> tuple[float, float, float]:
    """Cost in instance units, gap to BKS (%) and seconds of one real instance; the solution is
    validated in model units first (NaN cost and gap, with a warning, if infeasible)."""
    batch = cvrplib.to_batch(instance)
    start = time.perf_counter()
    with torch.no_grad():
        solutions = solver(batch)
    seconds = time.perf_counter() - start
    if np.isnan(validate_batch(batch, solutions, "warn", instance.name)[0]):
        return float("nan"), float("nan"), seconds
    cost = cvrplib.route_cost(instance, split_routes(solutions[0]))
    return cost, cvrplib.gap_to_bks(cost, instance.bks_cost), seconds


def set_x(models: dict[str, VRPEvaluationModule], args: Config) -> dict:
    """CVRPLIB Set X, gaps to BKS by size band."""
    return real_instances(models, args, {"CVRP": args.x_instances})


def vrpb_vrptw(models: dict[str, VRPEvaluationModule], args: Config) -> dict:
    """The real VRPB and VRPTW instances, gaps to BKS per benchmark."""
    return real_instances(models, args, {"VRPB": args.real_instances, "VRPTW": args.real_instances})


def real_instances(
    models: dict[str, VRPEvaluationModule], args: Config, counts: dict[str, int | None]
) -> dict:
    """The first `counts[benchmark]` (None = all) instances of each benchmark by size."""
    budget = args.large_r3c
    solvers = {
        "student greedy": greedy(models["student"]),
        f"student + R3C {budget}": with_r3c(models["student"], budget),
        "MTPOMO greedy": greedy(models["mtpomo"]),
    }
    rows: dict[str, dict[str, object]] = {}
    for benchmark, count in counts.items():
        names = sorted(cvrplib.instance_names(benchmark), key=customers_in_name)[:count]
        for name in names:
            instance = cvrplib.load_instance(benchmark, name)
            row: dict[str, object] = {"n": instance.num_customers, "bks": instance.bks_cost}
            for method, solver in solvers.items():
                cost, gap, seconds = benchmark_solver(solver, instance)
                row[method] = {"cost": cost, "gap": gap, "seconds": seconds}
            rows[f"{benchmark}/{name}"] = row
            Run.log(f"{benchmark} {name} " + str({m: round(row[m]["gap"], 2) for m in solvers}))
    bands = {}
    for low, high in BANDS:
        members = [r for k, r in rows.items() if k.startswith("CVRP/") and low <= r["n"] <= high]
        if members:
            bands[f"X n {low}-{high}"] = band_means(members, solvers)
    for benchmark in ("VRPB", "VRPTW"):
        members = [r for k, r in rows.items() if k.startswith(f"{benchmark}/")]
        if members:
            bands[benchmark] = band_means(members, solvers)
    return {"rows": rows, "bands": bands}


def customers_in_name(name: str) -> tuple[int, str]:
    """Sort key: the size in an X name ("X-n101-k25" -> 101), then the name."""
    match = re.search(r"-n(\d+)", name)
    return (int(match.group(1)) if match else 0, name)


def band_means(members: list[dict], methods: dict[str, Solver]) -> dict[str, float]:
    """Per method: mean gap over the feasible members, their share, mean seconds."""
    out: dict[str, float] = {"instances": len(members)}
    for method in methods:
        gaps = np.array([r[method]["gap"] for r in members], dtype=float)
        out[method] = float(np.nanmean(gaps)) if np.isfinite(gaps).any() else float("nan")
        out[f"{method} feasible"] = float(np.isfinite(gaps).mean())
        out[f"{method} s"] = float(np.mean([r[method]["seconds"] for r in members]))
    return out


@dataclass(frozen=True)
class Config:
    """The parts, sizes, instance counts and budgets (see the module docstring); `student` and
    `mtpomo` name weight files or Lightning checkpoints (`weights/mtlkd/<name>.pt`: shipped)."""

    student: str = "weights/mtlkd/student_n50.pt"
    mtpomo: str = "weights/mtlkd/mtpomo_n50.pt"
    parts: tuple[Part, ...] = PARTS
    size: int = 50
    instances: int = 1000
    seen_iterations: int = 1000  # PyVRP, ~1 s at n 50
    unseen_iterations: int = 250  # ~0.1-0.25 s at n 50
    chunk: int = 250  # instances per decoding batch
    augment_instances: int = 200
    r3c_instances: int = 64
    r3c_budgets: tuple[int, ...] = (10, 25, 50)
    large_r3c: int = 20  # R3C rounds at n > 50
    segment: tuple[int, ...] = (4, 20)
    general_variants: tuple[str, ...] = ("CVRP", "OVRP", "VRPB", "VRPTW")
    general_sizes: tuple[int, ...] = (100, 200, 500, 1000)
    general_instances: tuple[int, ...] = (64, 32, 16, 8)
    general_iterations: tuple[int, ...] = (1000, 1000, 1000, 1000)
    x_instances: int | None = None  # None: all 100
    real_instances: int | None = None  # VRPB, VRPTW; None: all
    cache_dir: Path = ROOT / "data" / "vrp"
    threads: int = 2
    wandb: bool = False  # also log the tables to W&B

    def __post_init__(self) -> None:
        for option, path in (("--student", self.student), ("--mtpomo", self.mtpomo)):
            if not resolve_weights(path).is_file():
                raise ValueError(f"{option}: no such weights file or checkpoint: {path}")
        if len(self.segment) != 2:
            raise ValueError("--segment: give two numbers (R3C segment lengths)")
        if unknown := sorted(set(self.general_variants) - set(ALL_VARIANTS)):
            raise ValueError(f"--general-variants: not a variant: {', '.join(unknown)}")
        counts = {len(self.general_instances), len(self.general_iterations)}
        if counts != {len(self.general_sizes)}:
            raise ValueError(
                "--general-instances, --general-iterations: give one value per --general-sizes"
            )


def main(out: Run, args: Config) -> None:
    """Each part in turn: one result file (and, for r3c and generalization, a figure) each."""
    torch.set_num_threads(args.threads)
    models = {
        "student": load_model(Path(args.student), r3c_segment=args.segment),
        "mtpomo": load_model(Path(args.mtpomo)),
    }
    parts = {"suite": suite, "r3c": r3c_curve, "generalization": generalization}
    parts.update(cvrplib=set_x, real=vrpb_vrptw)
    tables = {}
    for part in args.parts:
        result = parts[part](models, args)
        text, columns, table = markdown(part, result, args)
        stem = f"mtlkd_{part}_n{args.size}" if part in ("suite", "r3c") else f"mtlkd_{part}"
        written = out.write(stem, {"config": asdict(args), **result}, text, indent=2)
        if figure := draw_from_json(written[0], out.figure_dir):
            out.written.append(figure)
        tables[f"mtlkd_{part}"] = (columns, table)
    if args.wandb:
        log_tables("mtlkd_evaluation", asdict(args), tables)


# Seconds with the shipped weights (the real part's instances, n >= 523, take minutes).
# The suite part on the shipped weights at n = 8, greedy only: seconds. Every part at tiny scale
# is tests/benchmarks/test_mtlkd_evaluation.py's.
SMOKE = dict(parts=("suite",), size=8, instances=2, seen_iterations=10, unseen_iterations=10)
SMOKE.update(augment_instances=0, threads=1)

BENCHMARK = Benchmark(
    "mtlkd_evaluation",
    main,
    Config,
    smoke=SMOKE,
    nonnegative=SKIPPED_AT_0,
)

if __name__ == "__main__":
    BENCHMARK.main()
