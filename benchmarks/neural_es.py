"""Neural-ES against NSGA-II, MOEA/D, SMS-EMOA, a PGPE-trained Pareto set network and random
search at an equal evaluation budget on the rotated PSL suite; model query cost after training.

Every method gets a fresh `EvaluationBudget` of `--budget` evaluations and is scored by the IGD
(moocore) of the non-dominated archive of everything it evaluated against the true front (300
points for two objectives, 990 for three) and the hypervolume with reference point 1.1 per
objective. Neural-ES is also scored by its model's answers (the block means) at a simplex
lattice of 100 / 300 preferences, evaluated outside the budget. Time per 10^5 evaluations is
the method's wall time scaled to 10^5 evaluations. The query section times the trained model on
1000 preferences against re-running EvoTorch's SNES per preference on the same Tchebycheff
scalarisation (timed on `--rerun-prefs` preferences, extrapolated to 1000).

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run neural_es
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.neural_es_baselines import (
    run_neural_es,
    run_psl_pgpe,
    run_pymoo,
    run_random_search,
)
from optiforge.lightning_modules.neural_es.front_figure import front_figure
from optiforge.lightning_modules.neural_es.model import ParetoSetModel
from optiforge.problems.multiobjective.budget import EvaluationBudget
from optiforge.problems.multiobjective.metrics import hypervolume, igd
from optiforge.problems.multiobjective.problem import MultiObjectiveProblem
from optiforge.problems.multiobjective.reference_directions import lattice_near, uniform_simplex
from optiforge.problems.multiobjective.registry import make_problem
from optiforge.problems.multiobjective.scalarization import tchebycheff

METHODS: dict[str, Callable[[EvaluationBudget, int], dict[str, Any]]] = {
    "neural_es": run_neural_es,
    "neural_es_known_ideal": lambda budget, seed: run_neural_es(budget, seed, known_ideal=True),
    "neural_es_authors": lambda budget, seed: run_neural_es(
        budget, seed, hidden=1024, known_ideal=True
    ),  # the authors' code defaults: a 2 x 1024 MLP, the rest as above
    "nsga2": lambda budget, seed: run_pymoo(budget, seed, "nsga2"),
    "moead": lambda budget, seed: run_pymoo(budget, seed, "moead"),
    "smsemoa": lambda budget, seed: run_pymoo(budget, seed, "smsemoa"),
    "psl_pgpe": run_psl_pgpe,
    "random": run_random_search,
}


def model_answers(model: ParetoSetModel, problem: MultiObjectiveProblem) -> torch.Tensor:
    """Objectives of the model's block means at the evaluation lattice (clamped into the box;
    not counted against any budget)."""
    prefs = lattice_near(problem.num_obj, 100 if problem.num_obj == 2 else 300).float()
    with torch.no_grad():
        x, _ = model(prefs)
    lower, upper = problem.bounds(x.double())
    return problem.evaluate(torch.minimum(torch.maximum(x.double(), lower), upper))


def run_one(problem: MultiObjectiveProblem, method: str, seed: int, budget: int) -> dict[str, Any]:
    """One method's run on `problem`: its scores, evaluations used and timings."""
    out_of_box = "penalty" if method.startswith("neural_es") else "refuse"
    counter = EvaluationBudget(problem, budget, out_of_box=out_of_box)
    start = time.perf_counter()
    extra = METHODS[method](counter, seed)
    seconds = time.perf_counter() - start
    front = problem.pareto_front(300 if problem.num_obj == 2 else 990)
    reference = torch.full((problem.num_obj,), 1.1, dtype=torch.float64)
    row: dict[str, Any] = {
        "problem": problem.name,
        "dim": problem.dim,
        "method": method,
        "seed": seed,
        "evaluations": counter.used,
        "igd_archive": igd(counter.archive.f, front),
        "hv_archive": hypervolume(counter.archive.f, reference),
        "seconds": seconds,
        "seconds_per_1e5": seconds / counter.used * 1e5,
    }
    if "model" in extra:
        answers = model_answers(extra["model"], problem)
        row["igd_model"] = igd(answers, front)
        row["_model"], row["_answers"] = extra["model"], answers
    row["_archive"] = counter.archive.f
    return row


def query_comparison(
    model: ParetoSetModel,
    problem: MultiObjectiveProblem,
    rerun_prefs: int,
    rerun_budget: int,
    seed: int,
) -> dict[str, Any]:
    """Model answers for 1000 preferences vs SNES re-run per preference (Tchebycheff, ideal 0)."""
    from evotorch import Problem
    from evotorch.algorithms import SNES

    generator = torch.Generator().manual_seed(seed)
    prefs = uniform_simplex(1000, problem.num_obj, generator).float()
    start = time.perf_counter()
    with torch.no_grad():
        x, _ = model(prefs)
    model_seconds = time.perf_counter() - start
    lower, upper = problem.bounds(x.double())
    ideal = torch.zeros(problem.num_obj, dtype=torch.float64)
    model_values = tchebycheff(
        problem.evaluate(torch.minimum(torch.maximum(x.double(), lower), upper)),
        prefs.double(),
        ideal,
    )
    rerun_values, start = [], time.perf_counter()
    for index in range(rerun_prefs):  # one independent optimisation per preference, by design
        pref = prefs[index : index + 1].double()
        counter = EvaluationBudget(problem, rerun_budget)

        def fitness(
            batch: torch.Tensor, pref: torch.Tensor = pref, counter=counter
        ) -> torch.Tensor:
            points = lower + (upper - lower) * torch.sigmoid(batch.double())
            f = counter.evaluate(points)
            return tchebycheff(f, pref.expand(len(f), -1), ideal).float()

        task = Problem(
            "min",
            fitness,
            solution_length=problem.dim,
            initial_bounds=(-1, 1),
            vectorized=True,
            seed=seed + index,
        )
        popsize = 4 + math.floor(3 * math.log(problem.dim))
        searcher = SNES(task, stdev_init=1.0, popsize=popsize)
        while counter.remaining >= popsize:
            searcher.step()
        rerun_values.append(float(searcher.status["pop_best_eval"]))
    rerun_seconds = (time.perf_counter() - start) / rerun_prefs
    return {
        "problem": problem.name,
        "dim": problem.dim,
        "model_seconds_1000": model_seconds,
        "model_ms_per_preference": model_seconds,  # 1000 preferences: seconds = ms each
        "model_tchebycheff_mean_first": float(model_values[:rerun_prefs].mean()),
        "model_tchebycheff_mean_1000": float(model_values.mean()),
        "snes_budget_per_preference": rerun_budget,
        "snes_seconds_per_preference": rerun_seconds,
        "snes_seconds_1000_extrapolated": rerun_seconds * 1000,
        "snes_tchebycheff_mean": float(np.mean(rerun_values)),
        "rerun_preferences": rerun_prefs,
    }


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and std over seeds per (problem, dim, method)."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["problem"], row["dim"], row["method"]), []).append(row)
    summary = []
    for (name, dim, method), members in groups.items():
        entry: dict[str, Any] = {
            "problem": name,
            "dim": dim,
            "method": method,
            "seeds": len(members),
        }
        for key in ("igd_archive", "hv_archive", "igd_model", "seconds_per_1e5", "evaluations"):
            values = [m[key] for m in members if key in m]
            if values:
                entry[key] = float(np.mean(values))
                entry[key + "_std"] = float(np.std(values))
        summary.append(entry)
    return summary


def markdown(summary: list[dict[str, Any]], query: dict[str, Any] | None, command: str) -> str:
    """The results as markdown tables."""
    lines = [
        f"Command: `{command}`",
        "",
        "| problem | D | method | IGD archive | IGD model | HV archive | evals | s / 1e5 evals |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in summary:
        model = f"{e['igd_model']:.4f} ± {e['igd_model_std']:.4f}" if "igd_model" in e else "-"
        lines.append(
            f"| {e['problem']} | {e['dim']} | {e['method']} | {e['igd_archive']:.4f} ± "
            f"{e['igd_archive_std']:.4f} | {model} | {e['hv_archive']:.4f} | "
            f"{e['evaluations']:.0f} | {e['seconds_per_1e5']:.1f} |"
        )
    if query:
        lines += ["", "| query | value |", "|---|---|"]
        lines += [f"| {key} | {value} |" for key, value in query.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    """`rerun_prefs` / `rerun_budget`: the query comparison; `name`: the result file stem."""

    problems: tuple[str, ...] = ("psl1", "psl5")
    dims: tuple[int, ...] = (32, 64, 128)
    seeds: int = 5
    budget: int = 10_000
    methods: tuple[Literal[tuple(METHODS)], ...] = tuple(METHODS)
    rerun_prefs: int = 5
    rerun_budget: int = 2000
    name: str = "neural_es"


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(1)
    command = run.provenance["command"]
    rows: list[dict[str, Any]] = []
    for name in args.problems:
        for dim in args.dims:
            problem = make_problem(name, dim)
            for seed in range(args.seeds):
                for method in args.methods:
                    row = run_one(problem, method, seed, args.budget)
                    rows.append(row)
                    run.log(f"{name} D={dim} seed={seed} {method:10s} IGD={row['igd_archive']:.4f}")
    query = None
    first = next((r for r in rows if "_model" in r), None)
    if first is not None:
        problem = make_problem(first["problem"], first["dim"])
        query = query_comparison(first["_model"], problem, args.rerun_prefs, args.rerun_budget, 0)
        fronts = {
            r["method"] + " archive": r["_archive"]
            for r in rows
            if r["problem"] == first["problem"]
            and r["dim"] == first["dim"]
            and r["seed"] == 0
            and r["method"] in ("neural_es", "neural_es_known_ideal", "nsga2")
        }
        fronts["neural_es model"] = first["_answers"]
        figure = front_figure(
            fronts,
            problem.pareto_front(300),
            f"{first['problem']} D={first['dim']} budget {args.budget}",
        )
        figure.savefig(run.figure(f"{args.name}_front.png"), dpi=120)
    summary = summarise(rows)
    clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    payload = {
        "budget": args.budget,
        "rows": clean,
        "summary": summary,
        "query": query,
        "torch_threads": torch.get_num_threads(),
    }
    run.write(args.name, payload, markdown(summary, query, command), indent=2)


BENCHMARK = Benchmark(
    "neural_es",
    main,
    Config,
    smoke=dict(problems=("psl1",), dims=(16,), seeds=1, budget=200, rerun_prefs=1, rerun_budget=50),
    peers=("pymoo", "evotorch"),
)

if __name__ == "__main__":
    BENCHMARK.main()
