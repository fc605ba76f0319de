"""MTL-KD evaluation: the student against the MTPOMO-style baseline and the single-task teachers.

    python -m optiforge.benchmarks.mtlkd_evaluation --student weights/mtlkd/student_n50.pt \\
        --mtpomo weights/mtlkd/mtpomo_n50.pt [--parts suite r3c generalization cvrplib]
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
Writes `--output-dir` (benchmarks/results)/mtlkd_<part>.{json,md} (suite and r3c with the size:
mtlkd_suite_n50); `--wandb` also logs the tables as one W&B run (offline without a key).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from optiforge.benchmarks.figures import figure_dir
from optiforge.benchmarks.harness.checks import check_arguments
from optiforge.benchmarks.mtlkd_figures import draw_from_json
from optiforge.benchmarks.mtlkd_tables import markdown
from optiforge.benchmarks.wandb_tables import log_tables
from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules.mtlkd.policy_weights import (
    build_module,
    export_checkpoint,
    shipped_teacher_path,
)
from optiforge.lightning_modules.mtlkd.r3c import r3c
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule
from optiforge.problems.vrp import cvrplib
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_AT_0 = ("augment_instances", "r3c_instances", "large_r3c")  # 0 skips these parts
RESULTS = ROOT / "benchmarks" / "results"
UNSEEN_VARIANTS = tuple(name for name in ALL_VARIANTS if name not in SEEN_VARIANTS)
PARTS = ("suite", "r3c", "generalization", "cvrplib", "real")
BANDS = ((0, 250), (251, 500), (501, 1000))
Solver = Callable[[VRPBatch], Tensor]


def load_model(path: Path, **settings: object) -> VRPEvaluationModule:
    """A model from a weights file, or from a Lightning checkpoint (exported on the way), built
    with `settings` as further constructor arguments."""
    if path.suffix != ".ckpt":
        return build_module(path, **settings)
    with tempfile.TemporaryDirectory() as scratch:
        exported = Path(scratch) / "exported.pt"
        export_checkpoint(path, exported)
        return build_module(exported, **settings)


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@contextmanager
def peak_rss_increase() -> Iterator[dict[str, float]]:
    """Yields a dict whose "mib" is, after the block, the peak RSS growth during it."""
    result = {"mib": 0.0}
    start, peak, done = rss_bytes(), [rss_bytes()], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield result
    finally:
        done.set()
        thread.join()
        result["mib"] = (max(peak[0], rss_bytes()) - start) / 2**20


def run(solver: Solver, instances: VRPBatch, chunk: int, name: str) -> dict[str, object]:
    """Solve `instances` in chunks; validated costs [B] (NaN if infeasible), feasibility,
    milliseconds per instance and the peak RSS growth while solving."""
    costs, seconds = [], 0.0
    with peak_rss_increase() as memory:
        for first in range(0, instances.batch_size, chunk):
            part = instances.index(slice(first, first + chunk))
            start = time.perf_counter()
            with torch.no_grad():
                solutions = solver(part)
            seconds += time.perf_counter() - start
            costs.append(validate_batch(part, solutions, "warn", name))
    cost = np.concatenate(costs)
    return {
        "cost": cost,
        "feasible": float(np.isfinite(cost).mean()),
        "ms_per_instance": 1e3 * seconds / instances.batch_size,
        "peak_rss_increase_mib": memory["mib"],
    }


def gap_summary(result: dict[str, object], reference: np.ndarray) -> dict[str, float]:
    """Mean gap (%) over feasible solutions, feasibility and time of one `run` result."""
    cost = result["cost"]
    gap = 100.0 * (cost - reference) / reference
    return {
        "gap": float(np.nanmean(gap)),
        "feasible": result["feasible"],
        "ms_per_instance": result["ms_per_instance"],
        "peak_rss_increase_mib": result["peak_rss_increase_mib"],
    }


def greedy(module: VRPEvaluationModule) -> Solver:
    """The module's own greedy decoding (the student's without R3C)."""
    if isinstance(module, MTLKDStudent):
        return lambda batch: module.solve(batch, "greedy", r3c_iterations=0)
    return lambda batch: module.solve(batch, "greedy")


def augment(module: VRPEvaluationModule) -> Solver:
    """The module's multi-start x 8 augmentation decoding."""
    return lambda batch: module.solve(batch, "augment")


def with_r3c(student: MTLKDStudent, budget: int) -> Solver:
    """The student's greedy decoding followed by `budget` R3C rounds (its segment and seed)."""
    return lambda batch: student.solve(batch, "greedy", r3c_iterations=budget)


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


def suite(models: dict[str, VRPEvaluationModule], args: argparse.Namespace) -> dict:
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
        print(name, {m: round(r["gap"], 2) for m, r in rows[name].items()}, flush=True)
    methods = [m for m in ("student greedy", "MTPOMO greedy", "MTPOMO x8 aug") if m in rows["CVRP"]]
    means = {
        group: {m: float(np.mean([rows[v][m]["gap"] for v in names])) for m in methods}
        for group, names in (("seen", SEEN_VARIANTS), ("unseen", UNSEEN_VARIANTS))
    }
    return {"rows": rows, "means": means}


def r3c_curve(models: dict[str, VRPEvaluationModule], args: argparse.Namespace) -> dict:
    """Gap after each cumulative R3C budget, per variant; every stage validated."""
    student = models["student"]
    rows: dict[str, dict[str, float]] = {}
    for name in ALL_VARIANTS:
        budget = args.seen_iterations if name in SEEN_VARIANTS else args.unseen_iterations
        instances, reference = test_set(name, args.size, args.instances, budget, args.cache_dir)
        instances = instances.index(slice(0, args.r3c_instances))
        reference = reference[: args.r3c_instances]
        rows[name] = r3c_stages(student, instances, reference, args)
        print(name, {k: round(v, 2) for k, v in rows[name].items()}, flush=True)
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


def generalization(models: dict[str, VRPEvaluationModule], args: argparse.Namespace) -> dict:
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
            print(name, size, rows[f"{name}/n{size}"], flush=True)
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


def set_x(models: dict[str, VRPEvaluationModule], args: argparse.Namespace) -> dict:
    """CVRPLIB Set X, gaps to BKS by size band."""
    return real_instances(models, args, {"CVRP": args.x_instances})


def vrpb_vrptw(models: dict[str, VRPEvaluationModule], args: argparse.Namespace) -> dict:
    """The real VRPB and VRPTW instances, gaps to BKS per benchmark."""
    return real_instances(models, args, {"VRPB": args.real_instances, "VRPTW": args.real_instances})


def real_instances(
    models: dict[str, VRPEvaluationModule], args: argparse.Namespace, counts: dict[str, int | None]
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
            print(benchmark, name, {m: round(row[m]["gap"], 2) for m in solvers}, flush=True)
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--student", type=Path, required=True)
    parser.add_argument("--mtpomo", type=Path, required=True)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--seen-iterations", type=int, default=1000, help="PyVRP, ~1 s at n 50")
    parser.add_argument("--unseen-iterations", type=int, default=250, help="~0.1-0.25 s at n 50")
    parser.add_argument("--chunk", type=int, default=250, help="instances per decoding batch")
    parser.add_argument("--augment-instances", type=int, default=200)
    parser.add_argument("--r3c-instances", type=int, default=64)
    parser.add_argument("--r3c-budgets", type=int, nargs="+", default=[10, 25, 50])
    parser.add_argument("--large-r3c", type=int, default=20, help="R3C rounds at n > 50")
    parser.add_argument("--segment", type=int, nargs=2, default=(4, 20))
    parser.add_argument("--general-variants", nargs="+", default=["CVRP", "OVRP", "VRPB", "VRPTW"])
    parser.add_argument("--general-sizes", type=int, nargs="+", default=[100, 200, 500, 1000])
    parser.add_argument("--general-instances", type=int, nargs="+", default=[64, 32, 16, 8])
    parser.add_argument("--general-iterations", type=int, nargs="+", default=[1000] * 4)
    parser.add_argument("--x-instances", type=int, default=None, help="None = all 100")
    parser.add_argument("--real-instances", type=int, default=None, help="VRPB, VRPTW; None = all")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "data" / "vrp")
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--wandb", action="store_true", help="also log the tables to W&B")
    args = check_arguments(parser, parser.parse_args(argv), SKIPPED_AT_0, ("student", "mtpomo"))
    args.segment = tuple(args.segment)
    torch.set_num_threads(args.threads)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    models = {
        "student": load_model(args.student, r3c_segment=args.segment),
        "mtpomo": load_model(args.mtpomo),
    }
    parts = {"suite": suite, "r3c": r3c_curve, "generalization": generalization}
    parts.update(cvrplib=set_x, real=vrpb_vrptw)
    tables = {}
    config = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    for part in args.parts:
        result = parts[part](models, args)
        text, columns, table = markdown(part, result, args)
        stem = f"mtlkd_{part}_n{args.size}" if part in ("suite", "r3c") else f"mtlkd_{part}"
        (args.output_dir / f"{stem}.json").write_text(
            json.dumps({"config": config, **result}, indent=2, default=float)
        )
        (args.output_dir / f"{stem}.md").write_text(text)
        draw_from_json(args.output_dir / f"{stem}.json", figure_dir(args.output_dir))
        print(text, flush=True)
        tables[f"mtlkd_{part}"] = (columns, table)
    if args.wandb:
        log_tables("mtlkd_evaluation", config, tables)


if __name__ == "__main__":
    main()
