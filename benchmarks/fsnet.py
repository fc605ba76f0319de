"""FSNet against DC3, a penalty network and exact projection on the constrained families.

For every family and training seed, each learned method trains on the same parameter draws
with the same network, batch size and number of epochs (equal training budget), then solves the
cached test set in batches of `--eval-batch` (1024, the targets' batch size). Every returned
point is checked with the family's own residuals (`ConstrainedSolverModule.evaluate`). The
projection baseline projects the trained penalty network's predictions with cvxpy (convex
families only). The reference solver re-solves the accepted test instances one after another
inside this run (same machine state as the learned methods; its times replace the cached ones
from the cache build), and `speedup` = its summed time / the batch solve time.

Targets: convex QP: mean gap <= 1e-3, max violations <= 1e-5, speedup >= 5;
nonconvex and nonsmooth: FSNet's gap below DC3's and the penalty net's, violations <= 1e-5.

    python -m optiforge.benchmarks run fsnet --families convex_qp nonconvex_qp --seeds 3 --epochs 30
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import lightning as L
import numpy as np
import torch
from torch.utils.data import TensorDataset

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.benchmarks.wandb_tables import log_tables
from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule
from optiforge.lightning_modules.fsnet import DC3, FSNet, PenaltyNet, ProjectionNet
from optiforge.lightning_modules.fsnet.solver_module import ConstrainedSolverModule
from optiforge.problems.constrained import FAMILIES, ProblemSpec
from optiforge.problems.constrained.reference_solvers import solve_reference

FSNET_FAMILIES = [name for name in FAMILIES if not name.startswith("dc3_")]
METHODS = ("fsnet", "dc3", "penalty", "projection")
TARGET_GAP, TARGET_VIOLATION, TARGET_SPEEDUP = 1e-3, 1e-5, 5.0


def build(
    method: str, problem: ProblemSpec, args: Config, test_memory: int | None = None
) -> ConstrainedSolverModule:
    """A fresh model of `method` with the benchmark's shared network size (`test_memory`: FSNet's
    evaluation L-BFGS memory, None for the training memory)."""
    hidden = tuple(args.hidden)
    if method == "fsnet":
        return FSNet(
            problem,
            hidden,
            max_iter=args.train_iter,
            unrolled_iter=args.unrolled_iter,
            tolerance_every=max(1, args.epochs // 3),
            test_max_iter=args.test_iter,
            test_memory=test_memory,
        )
    if method == "dc3":
        return DC3(
            problem, hidden, correction_lr=args.dc3_lr, correction_steps_test=args.dc3_test_steps
        )
    return PenaltyNet(problem, hidden)


def fit(model: ConstrainedSolverModule, data: ConstrainedProblemDataModule, epochs: int, lr: float):
    """Train with Adam (FSNet's optimizer) for `epochs`; returns the trainer and seconds."""
    model.configure_optimizers = lambda: torch.optim.Adam(model.parameters(), lr=lr)
    trainer = quiet_trainer(epochs)
    start = time.perf_counter()
    trainer.fit(model, datamodule=data)
    return trainer, time.perf_counter() - start


def test(trainer: L.Trainer, model: ConstrainedSolverModule, data) -> dict[str, float]:
    """Test metrics of `model` (every point checked by the family's residuals)."""
    (metrics,) = trainer.test(model, datamodule=data, verbose=False)
    return {key.removeprefix("test/"): float(value) for key, value in metrics.items()}


def retime_reference(data: ConstrainedProblemDataModule) -> dict[str, float]:
    """Re-solve the test set's instances in this run and use those times for `speedup`.

    Returns the cached and the fresh total seconds and the largest objective difference
    between the two solves (a check that the fresh solve is the same reference).
    """
    x, solutions, objectives, cached_seconds = data.datasets["test"].tensors
    fresh = solve_reference(data.family, x, num_starts=data.hparams.num_starts)
    if not fresh.accepted.all():
        raise RuntimeError(f"re-solve: {int((~fresh.accepted).sum())} instances failed the check")
    data.datasets["test"] = TensorDataset(
        x, solutions, objectives, torch.from_numpy(fresh.solve_times)
    )
    difference = np.abs(fresh.objectives - objectives.numpy()) / np.maximum(
        1.0, np.abs(objectives.numpy())
    )
    return {
        "cached_seconds": float(cached_seconds.sum()),
        "fresh_seconds": float(fresh.solve_times.sum()),
        "max_relative_objective_difference": float(difference.max()),
    }


def run_family(
    name: str, args: Config
) -> tuple[dict[str, list[dict[str, float]]], dict[str, float]]:
    """All methods and seeds on one family, and the reference's re-timing."""
    problem = ProblemSpec(name)
    data = ConstrainedProblemDataModule(
        problem,
        train_size=args.train_size,
        val_size=1,
        test_size=args.test_size,
        batch_size=args.batch,
        eval_batch_size=args.eval_batch,
        cache_dir=str(args.cache_dir),
    )
    data.prepare_data()
    data.setup("fit")
    reference = retime_reference(data)
    print(name, "reference", json.dumps(reference), flush=True)
    runs: dict[str, list[dict[str, float]]] = {method: [] for method in args.methods}
    for seed in range(args.seeds):
        for method in args.methods:
            if method == "projection":
                continue
            L.seed_everything(seed, verbose=False)
            model = build(method, problem, args)
            trainer, seconds = fit(model, data, args.epochs, args.lr)
            result = test(trainer, model, data) | {"train_seconds": seconds}
            runs[method].append(result)
            print(name, method, seed, json.dumps(result), flush=True)
            if method == "penalty" and "projection" in args.methods and model.family.is_convex:
                projected = ProjectionNet(problem, tuple(args.hidden))
                projected.load_state_dict(model.state_dict())
                result = test(trainer, projected, data) | {"train_seconds": seconds}
                runs["projection"].append(result)
                print(name, "projection", seed, json.dumps(result), flush=True)
    return {method: results for method, results in runs.items() if results}, reference


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    """Means over seeds, except the maxima, which take the worst seed."""
    keys = runs[0].keys()
    return {
        key: float(
            np.max([r[key] for r in runs])
            if key.endswith("_max")
            else np.mean([r[key] for r in runs])
        )
        for key in keys
    }


def targets(name: str, summary: dict[str, dict[str, float]]) -> dict[str, bool]:
    """Which of the targets FSNet meets on this family."""
    fsnet = summary["fsnet"]
    violations_ok = max(fsnet["eq_violation_max"], fsnet["ineq_violation_max"]) <= TARGET_VIOLATION
    out = {"violations <= 1e-5": violations_ok}
    if name == "convex_qp":
        out["mean gap <= 1e-3"] = abs(fsnet["objective_gap_mean"]) <= TARGET_GAP
        out["speedup >= 5"] = fsnet["speedup"] >= TARGET_SPEEDUP
    if not ProblemSpec(name).build().is_convex:
        for peer in ("dc3", "penalty"):
            if peer in summary:
                better = fsnet["objective_gap_mean"] < summary[peer]["objective_gap_mean"]
                out[f"gap below {peer}"] = better
    return out


def markdown(results: dict[str, dict], args: Config) -> tuple[str, list, list]:
    columns = [
        "family",
        "method",
        "gap mean",
        "gap max",
        "eq viol max",
        "ineq viol max",
        "feasible (1e-5)",
        "batch s",
        "speedup",
        "train s",
    ]
    rows = []
    for name, entry in results.items():
        for method, s in entry["summary"].items():
            rows.append(
                [
                    name,
                    method,
                    f"{s['objective_gap_mean']:.2e}",
                    f"{s['objective_gap_max']:.2e}",
                    f"{s['eq_violation_max']:.1e}",
                    f"{s['ineq_violation_max']:.1e}",
                    f"{s['feasible_rate']:.3f}",
                    f"{s['batch_seconds']:.3f}",
                    f"{s['speedup']:.1f}",
                    f"{s['train_seconds']:.0f}",
                ]
            )
    header = (
        f"FSNet benchmark: {args.seeds} seeds, {args.epochs} epochs, MLP {args.hidden}, "
        f"{args.train_size} training draws, test {args.test_size} instances in batches of "
        f"{args.eval_batch}; gaps relative to the checked reference; maxima over all seeds"
    )
    lines = [header, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    lines += ["", "Reference solver, test set re-solved in this run (s, total):"]
    lines += [
        f"- {name}: {entry['reference']['fresh_seconds']:.1f} (cache build: "
        f"{entry['reference']['cached_seconds']:.1f}; max rel. objective difference "
        f"{entry['reference']['max_relative_objective_difference']:.1e})"
        for name, entry in results.items()
    ]
    lines += ["", "Targets (FSNet):"]
    lines += [f"- {name}: {entry['targets']}" for name, entry in results.items()]
    return "\n".join(lines) + "\n", columns, rows


@dataclass(frozen=True)
class Training:
    """The training both FSNet benchmarks share: `train_iter` / `test_iter` are FSNet's L-BFGS
    iterations in training / at test, `unrolled_iter` those it backpropagates through."""

    epochs: int = 60
    hidden: tuple[int, ...] = (256, 256)
    lr: float = 5e-4
    batch: int = 256
    train_size: int = 4096
    test_size: int = 1024
    train_iter: int = 20
    unrolled_iter: int = 10
    test_iter: int = 50
    cache_dir: Path = Path("data/constrained")


@dataclass(frozen=True)
class Config(Training):
    """The methods compared on each family; `output`: the result file stem."""

    families: tuple[Literal[tuple(FAMILIES)], ...] = tuple(FSNET_FAMILIES)
    methods: tuple[Literal[tuple(METHODS)], ...] = tuple(METHODS)
    seeds: int = 3
    eval_batch: int = 1024
    dc3_lr: float = 1e-3
    dc3_test_steps: int = 50
    threads: int = 1
    output: str = "fsnet"
    wandb: bool = False


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    results = {}
    for name in args.families:
        runs, reference = run_family(name, args)
        summary = {method: summarize(method_runs) for method, method_runs in runs.items()}
        results[name] = {
            "summary": summary,
            "targets": targets(name, summary),
            "reference": reference,
            "runs": runs,
        }
    text, columns, rows = markdown(results, args)
    config = asdict(args)
    run.write(args.output, {"config": config, "results": results}, text, indent=2)
    if args.wandb:
        log_tables(args.output, config, {args.output: (columns, rows)})


BENCHMARK = Benchmark(
    "fsnet",
    main,
    Config,
    smoke=dict(families=("convex_qp",), seeds=1, epochs=1, hidden=(16,), batch=32, train_size=64,
               test_size=16, eval_batch=16, train_iter=2, unrolled_iter=2, test_iter=3,
               dc3_test_steps=3),
)  # fmt: skip

if __name__ == "__main__":
    BENCHMARK.main()
