"""MTL-KD on the paper's benchmark: MVMoE's test sets, the student against MTPOMO and the teachers.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run mtlkd_mvmoe_table
        [--mvmoe-data Routing-MVMoE/data] [--student weights/mtlkd/student_mvmoe_n50.pt]
        [--mtpomo weights/mtlkd/mtpomo_mvmoe_n50.pt] [--parts suite large cross] [--sizes 50 100]
        [--prepare-only] [--publish]

`--mvmoe-data`: the `data` folder of a clone of https://github.com/RoyalSkye/Routing-MVMoE
(not shipped).

Parts (every solution checked by `optiforge.problems.vrp.validator`; gaps over validated costs):

- suite: the 16 variants at each of `--sizes`. The set is MVMoE's published test file (first
  `--instances`, references: the lowest cost over its solver result files that passes our
  validator) where the file exists, else `--generated-instances` instances generated under the
  "mvmoe" convention with PyVRP references of `--iterations` iterations. Where more than 5 % of
  a file's instances have no valid published reference (the backhaul variants: MVMoE's own
  solutions break its signed load rule), its first `--generated-instances` instances are solved
  by PyVRP (`--iterations`) and the reference is the better of the two. Methods: student greedy
  and MTPOMO greedy on all; MTPOMO and the seen variant's teacher with multi-start x 8
  augmentations on the first `--augment-instances`; student + R3C at `--r3c-budgets` rounds
  (cumulative, validated after each) on the first `--r3c-instances`.
- large: `--large-variants` at `--large-sizes` (`--large-instances` each, generated "mvmoe",
  PyVRP `--large-iterations`): student greedy with the k-nearest candidate restriction
  (`--candidate-k`), the same + `--large-r3c` R3C rounds, MTPOMO greedy; the mean PyVRP
  objective beside the paper's HGS objective where the paper reports one.
- cross: `--cross-models` (label=weights file) on `--cross-variants` at n = 50 under both
  conventions (`--cross-instances` each: MVMoE's file, and a generated "routefinder" set with
  PyVRP references): a student greedy, a POMO model multi-start x 8.

`--prepare-only` computes and caches the PyVRP references (in `--cache-dir`) and stops.
Writes mtlkd_mvmoe_<part>[_n<size>].{json,md} (published: benchmarks/results).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.mtlkd_evaluation import r3c_stages
from optiforge.benchmarks.mtlkd_solvers import augment, gap_summary, greedy, load_model
from optiforge.benchmarks.mtlkd_solvers import run as evaluate
from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules.mtlkd.policy_weights import resolve_weights
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.mvmoe_files import file_name, load_mvmoe_set
from optiforge.problems.vrp.pyvrp_solver import PyVRPSolver
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS

SKIPPED_AT_0 = ("augment_instances", "r3c_instances", "large_r3c")  # 0 skips these parts
PARTS = ("suite", "large", "cross")
MISSING_SHARE = 0.05
PAPER_HGS = {("CVRP", 100): 15.53, ("VRPTW", 100): 24.35, ("CVRP", 500): 62.07}
PAPER_HGS.update({("CVRP", 1000): 119.54, ("VRPTW", 1000): 166.47})


def generated_set(
    name: str, size: int, count: int, iterations: int, convention: str, args: Config
) -> tuple[VRPBatch, np.ndarray]:
    """A seeded generated test set with PyVRP references (cached in `--cache-dir`)."""
    data = VRPDataModule(
        train_variants=name,
        num_customers=size,
        eval_variants=[name],
        test_instances=count,
        reference_iterations=iterations,
        reference_workers=args.workers,
        cache_dir=str(args.cache_dir),
        convention=convention,
    )
    data.prepare_split("test")
    loaded = data.load_set("test", name, size)
    return loaded.instances, loaded.reference_cost.numpy()


def pyvrp_costs(batch: VRPBatch, key: str, args: Config) -> np.ndarray:
    """PyVRP costs of `batch` (`--iterations`), cached as `<cache-dir>/<key>.npy`."""
    path = args.cache_dir / f"{key}_i{args.iterations}.npy"
    if not path.is_file():
        solutions = PyVRPSolver(args.iterations, args.workers).solve(batch)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.array([s.cost for s in solutions]))
    return np.load(path)


def suite_set(name: str, size: int, args: Config) -> tuple[VRPBatch, np.ndarray, str]:
    """The evaluation set of (`name`, `size`), its references and where they come from."""
    if not (args.mvmoe_data / name / file_name(name, size)).is_file():
        batch, cost = generated_set(
            name, size, args.generated_instances, args.iterations, "mvmoe", args
        )
        return batch, cost, f"generated, PyVRP {args.iterations} it."
    loaded = load_mvmoe_set(args.mvmoe_data, name, size, args.instances)
    batch, cost = loaded.instances, loaded.reference_cost.numpy()
    missing = np.isnan(cost).mean()
    if missing <= MISSING_SHARE:
        return batch, cost, f"MVMoE file, published ({int(missing * len(cost))} without)"
    rows = slice(0, args.generated_instances)
    batch, cost = batch.index(rows), cost[rows]
    solved = pyvrp_costs(batch, f"mvmoe_fill_rr_{name}_n{size}_k{batch.batch_size}", args)
    best = np.fmin(cost, solved)
    return batch, best, f"MVMoE file, PyVRP {args.iterations} it. ({missing:.0%} published invalid)"


def teacher_path(name: str, args: Config) -> Path:
    """The seen variant's teacher file from the `--teachers` pattern."""
    return resolve_weights(args.teachers.format(variant=name.lower()))


def suite(models: dict, size: int, args: Config) -> dict:
    rows: dict[str, dict] = {}
    stages = SimpleNamespace(r3c_budgets=args.r3c_budgets, segment=args.segment)
    for name in ALL_VARIANTS:
        instances, reference, source = suite_set(name, size, args)
        if args.prepare_only:
            continue
        row: dict[str, object] = {"source": source, "instances": instances.batch_size}
        row["reference mean"] = float(np.nanmean(reference))
        for method, model in (("student greedy", "student"), ("MTPOMO greedy", "mtpomo")):
            result = evaluate(greedy(models[model]), instances, args.chunk, method)
            row[method] = gap_summary(result, reference)
        first = slice(0, args.augment_instances)
        augmented = {"MTPOMO x8": models["mtpomo"]}
        if name in SEEN_VARIANTS:
            augmented["teacher x8"] = load_model(teacher_path(name, args))
        for method, model in augmented.items():
            result = evaluate(augment(model), instances.index(first), args.chunk, method)
            row[method] = gap_summary(result, reference[first])
        first = slice(0, args.r3c_instances)
        row["r3c"] = r3c_stages(models["student"], instances.index(first), reference[first], stages)
        rows[name] = row
        Run.log(f"{size} {name} {json.dumps(row, default=float)}")
    return {"rows": rows}


def large(models: dict, args: Config) -> dict:
    student = models.get("student")
    if student is not None:
        student.policy.candidate_k = args.candidate_k or None
    rows: dict[str, dict] = {}
    for name in args.large_variants:
        for size, count in zip(args.large_sizes, args.large_instances, strict=True):
            instances, reference = generated_set(
                name, size, count, args.large_iterations, "mvmoe", args
            )
            if args.prepare_only:
                continue
            chunk = max(1, min(args.chunk, 4096 // size))
            solvers = {
                "student greedy": greedy(student),
                f"student + R3C {args.large_r3c}": lambda b: student.solve(
                    b, "greedy", r3c_iterations=args.large_r3c
                ),
                "MTPOMO greedy": greedy(models["mtpomo"]),
            }
            row: dict[str, object] = {"instances": count}
            row["PyVRP mean"] = float(np.mean(reference))
            row["paper HGS mean"] = PAPER_HGS.get((name, size))
            for method, solver in solvers.items():
                row[method] = gap_summary(evaluate(solver, instances, chunk, method), reference)
            rows[f"{name}/n{size}"] = row
            Run.log(f"{name} {size} {json.dumps(row, default=float)}")
    return {"rows": rows, "candidate_k": args.candidate_k}


def cross(args: Config) -> dict:
    rows: dict[str, dict] = {}
    for name in args.cross_variants:
        sets = {"mvmoe": None, "routefinder": None}
        loaded = load_mvmoe_set(args.mvmoe_data, name, 50, args.cross_instances)
        sets["mvmoe"] = (loaded.instances, loaded.reference_cost.numpy())
        sets["routefinder"] = generated_set(
            name, 50, args.cross_instances, args.iterations, "routefinder", args
        )
        if args.prepare_only:
            continue
        for label, path in (entry.split("=", 1) for entry in args.cross_models):
            trained_on = torch.load(resolve_weights(path), weights_only=True).get("variants") or []
            if trained_on and name not in trained_on:
                continue  # a single-task teacher of another variant
            model = load_model(Path(path))
            decode = greedy(model) if isinstance(model, MTLKDStudent) else augment(model)
            for convention, (instances, reference) in sets.items():
                result = evaluate(decode, instances, args.chunk, f"{label} on {convention}")
                rows[f"{name}/{label}/{convention}"] = gap_summary(result, reference)
                print(name, label, convention, rows[f"{name}/{label}/{convention}"], flush=True)
    return {"rows": rows}


def cell(value: object) -> str:
    if isinstance(value, dict):
        return f"{value['gap']:.2f}" + ("" if value["feasible"] == 1.0 else "*")
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def markdown(part: str, result: dict, args: Config, size: int | None) -> str:
    """The part's table: gaps in %, `*` where some solution was infeasible."""
    rows = result["rows"]
    head = f"MTL-KD on MVMoE's benchmark ({part}{'' if size is None else f', n = {size}'})\n\n"
    if part == "cross":
        lines = ["| variant | model | tested on | gap % | feasible |", "|---|---|---|---|---|"]
        for key, value in rows.items():
            name, label, convention = key.split("/")
            feasible = value["feasible"]
            lines.append(f"| {name} | {label} | {convention} | {cell(value)} | {feasible} |")
        return head + "\n".join(lines) + "\n"
    if part == "large":
        methods = ["student greedy", f"student + R3C {args.large_r3c}", "MTPOMO greedy"]
        lines = [
            "| set | instances | PyVRP mean | paper HGS mean | "
            + " | ".join(f"{m} gap %" for m in methods)
            + " | student ms | MTPOMO ms |",
            "|---" * (len(methods) + 6) + "|",
        ]
        for key, row in rows.items():
            cells = [key, row["instances"], row["PyVRP mean"], row["paper HGS mean"]]
            cells += [row[m] for m in methods]
            cells += [round(row["student greedy"]["ms_per_instance"], 1)]
            cells += [round(row["MTPOMO greedy"]["ms_per_instance"], 1)]
            lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
        return head + f"k-nearest candidates: {args.candidate_k}\n\n" + "\n".join(lines) + "\n"
    budgets = [0, *args.r3c_budgets]
    methods = ["student greedy", "MTPOMO greedy", "MTPOMO x8", "teacher x8"]
    lines = [
        "| variant | reference | instances | "
        + " | ".join(f"{m} gap %" for m in methods)
        + " | "
        + " | ".join(f"R3C {b} gap %" for b in budgets[1:])
        + " |",
        "|---" * (3 + len(methods) + len(budgets) - 1) + "|",
    ]
    for name, row in rows.items():
        cells = [name, row["source"], row["instances"], *(row.get(m) for m in methods)]
        cells += [f"{row['r3c'][f'gap@{b}']:.2f}" for b in budgets[1:]]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return head + means_text(rows, methods, budgets) + "\n".join(lines) + "\n"


def means_text(rows: dict, methods: list[str], budgets: list[int]) -> str:
    """Mean gaps over the seen and the unseen variants."""
    out = []
    for group in ("seen", "unseen"):
        names = [n for n in rows if (n in SEEN_VARIANTS) == (group == "seen")]
        parts = [
            f"{m} {np.mean([rows[n][m]['gap'] for n in names]):.2f}"
            for m in methods
            if all(m in rows[n] for n in names)
        ]
        for budget in budgets:
            mean = np.mean([rows[n]["r3c"][f"gap@{budget}"] for n in names])
            parts.append(f"R3C {budget} {mean:.2f}")
        out.append(f"- mean gap % over the {group} variants: " + ", ".join(parts))
    return "\n".join(out) + "\n\n"


@dataclass
class Config:
    """The parts, sizes, instance counts and budgets (see the module docstring); `student`,
    `mtpomo` and `teachers` name weight files (`weights/mtlkd/<name>.pt`: a shipped one)."""

    mvmoe_data: Path = Path("Routing-MVMoE/data")
    student: str = "weights/mtlkd/student_mvmoe_n50.pt"
    mtpomo: str = "weights/mtlkd/mtpomo_mvmoe_n50.pt"
    teachers: str = "weights/mtlkd/teacher_{variant}_mvmoe_n50.pt"
    parts: tuple[str, ...] = PARTS
    sizes: tuple[int, ...] = (50, 100)
    instances: int = 1000
    generated_instances: int = 100
    iterations: int = 500  # PyVRP, suite and cross
    augment_instances: int = 100
    r3c_instances: int = 32
    r3c_budgets: tuple[int, ...] = (20, 50, 200)
    segment: tuple[int, ...] = (4, 20)
    large_variants: tuple[str, ...] = ("CVRP", "VRPTW", "OVRPL", "VRPLTW")
    large_sizes: tuple[int, ...] = (200, 500, 1000)
    large_instances: tuple[int, ...] = (16, 8, 4)
    large_iterations: int = 500
    large_r3c: int = 20
    candidate_k: int = 20  # 0: unrestricted
    cross_variants: tuple[str, ...] = ("CVRP", "VRPTW")
    cross_instances: int = 200
    cross_models: tuple[str, ...] = ()
    chunk: int = 250
    workers: int = 1  # PyVRP processes
    threads: int = 1
    cache_dir: Path = ROOT / "data" / "vrp"
    prepare_only: bool = False

    def __post_init__(self) -> None:
        if unknown := sorted(set(self.parts) - set(PARTS)):
            raise ValueError(f"--parts: choose from {', '.join(PARTS)}, got {', '.join(unknown)}")
        if len(self.segment) != 2:
            raise ValueError("--segment: give two numbers (R3C segment lengths)")
        if len(self.large_instances) != len(self.large_sizes):
            raise ValueError("--large-instances: give one count per --large-sizes value")


def run(run: Run, args: Config) -> None:
    """Each part (and each suite size) in turn, one result file each."""
    torch.set_num_threads(args.threads)
    models = {}
    if not args.prepare_only and {"suite", "large"} & set(args.parts):
        models["student"] = load_model(Path(args.student), r3c_segment=args.segment)
        models["mtpomo"] = load_model(Path(args.mtpomo))
    config = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(args).items()}
    config["mvmoe_data"] = "<MVMoE data folder>"
    config["cache_dir"] = "<cache folder>"  # no machine path in a published file
    jobs = [("suite", size) for size in args.sizes if "suite" in args.parts]
    jobs += [(part, None) for part in ("large", "cross") if part in args.parts]
    for part, size in jobs:
        if part == "suite":
            result = suite(models, size, args)
        else:
            result = large(models, args) if part == "large" else cross(args)
        if args.prepare_only:
            continue
        stem = f"mtlkd_mvmoe_{part}" + ("" if size is None else f"_n{size}")
        run.write(stem, {"config": config, **result}, markdown(part, result, args, size), indent=2)


BENCHMARK = Benchmark(
    "mtlkd_mvmoe_table",
    run,
    Config,
    smoke=dict(
        parts=("suite",),
        sizes=(50,),
        instances=4,
        generated_instances=2,
        iterations=10,
        augment_instances=2,
        r3c_instances=1,
        r3c_budgets=(2,),
    ),
    nonnegative=SKIPPED_AT_0,
    external=("mvmoe_data",),
)

if __name__ == "__main__":
    BENCHMARK.main()
