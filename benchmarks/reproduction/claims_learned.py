"""Claims of the learned systems: testbeds, VRP / MTL-KD, constrained learning, equivariant MLPs,
FSNet, Hephaestus, Neural-ES. Each number is read from its published result."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from optiforge.benchmarks.reproduction.model import Better, Claim, Every, Number, Rule, Threshold
from optiforge.benchmarks.reproduction.select import (
    Getter,
    Result,
    across,
    at,
    field,
    get,
    ratio,
    rows,
    scaled,
)

CVRP1000 = ("rows", "CVRP/n1000")
MTLKD_SEEN = ("CVRP", "OVRP", "VRPB", "VRPL", "VRPTW", "OVRPTW")  # the paper's 6 seen variants
SAME_STRUCTURE = "n4 teacher 4 set, student 4 set"  # the one setting whose hidden reps agree


def env_speedups(result: dict[str, Any]) -> list[float]:
    """Our env's instance-steps/s over RL4CO's, one per VRP variant."""
    ours, peer = result["ours"], result["peer"]
    return [ours[v]["instance_steps_per_s"] / peer[v]["instance_steps_per_s"] for v in ours]


def seen_mean(method: str) -> Getter:
    """Mean gap (%) of a decoding method over the paper's six seen variants."""
    return lambda result: statistics.fmean(
        result["rows"][variant][method]["gap"] for variant in MTLKD_SEEN
    )


def rel_l2(reduce: Any, method: str) -> Getter:
    """`reduce` (mean, population std) of the relative L2 error over a method's seeds."""
    return lambda result: reduce(
        [run["rel_l2"] for run in rows(result, ("rows",), method=method)[0]["runs"]]
    )


def stuck(reduce: Any, model: str) -> Getter:
    """`reduce` (min, max) over settings with differing hidden reps of a model's stuck share (%)."""
    return lambda result: (
        100
        * reduce(
            summary[f"{model} stuck"]
            for name, summary in result["summaries"].items()
            if name != SAME_STRUCTURE
        )
    )


def of_testbed(name: str, *path: str) -> Getter:
    """A number of one testbed's run in the testbeds result."""
    return lambda result: float(get(rows(result, ("rows",), testbed=name)[0], *path))


def runs_of(entry: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The runs of a solver comparison's entry: one run, or one per setting (solver setting,
    FSNet's evaluation memory), as the result files of successive versions store them."""
    return [entry] if key in entry else list(entry.values())


def solver_speedups(result: Result) -> list[float]:
    """FSNet's batch seconds against the matched solver's, per family and evaluation memory."""
    return [
        solver["wall_seconds"] / fsnet["batch_seconds"]
        for family in result["results"].values()
        for solver in runs_of(family["matched"], "wall_seconds")
        for fsnet in runs_of(family["fsnet"], "batch_seconds")
    ]


def gap_percents(result: Result) -> list[float]:
    """FSNet's mean objective gap (%) per family and evaluation memory."""
    return [
        100 * fsnet["objective_gap_mean"]
        for family in result["results"].values()
        for fsnet in runs_of(family["fsnet"], "batch_seconds")
    ]


def fsnet_claim(
    metric: str, result: str, numbers: tuple[Number, ...], rule: Rule | None = None
) -> Claim:
    """A measurement of FSNet's claim (the paper's one headline sentence)."""
    return Claim("fsnet", FSNET, FSNET_CLAIM, metric, result, numbers, rule)


def spread(
    what: str, values: Callable[[Result], list[float]], names: tuple[str, ...]
) -> tuple[Number, Number]:
    """The smallest and the largest of `values` pooled over the results `names` (a range)."""
    return tuple(  # type: ignore[return-value]
        Number(f"{what}, {word}", across(reduce, values), ".0f", across=names)
        for word, reduce in (("smallest", min), ("largest", max))
    )


def matched_speedup(family: str) -> Getter:
    """FSNet's speedup over the matched solver on one family (a result with one FSNet run)."""
    return ratio(
        at("results", family, "matched", "wall_seconds"),
        at("results", family, "fsnet", "batch_seconds"),
    )


def igd(problem: str, dim: int, method: str) -> Getter:
    """Archive IGD of a method on a problem and dimension (mean over seeds)."""
    return field(("summary",), "igd_archive", problem=problem, dim=dim, method=method)


OURS_PINN = "equality-constrained (ours)"
PENALTY_PINN = "PINN penalty (1, 100, 100)"
MTLKD = "MTL-KD (multi-task VRP by knowledge distillation)"
MTLKD_CLAIM = (
    "Experimental results on 6 seen and 10 unseen VRP variants with up to 1,000 nodes indicate "
    "that our proposed method consistently achieves superior performance on both uniform and "
    "real-world benchmarks"
)
FSNET = "FSNet (feasibility-seeking neural network)"
FSNET_CLAIM = (
    "FSNet can provide feasible solutions with solution quality comparable to (or in some cases "
    "better than) traditional solvers, at significantly faster speeds"
)
FSNET_NONCONVEX = ("fsnet_vs_solvers_nonconvex_qp_qcqp", "fsnet_vs_solvers_nonconvex_socp")
FSNET_500 = tuple(
    f"fsnet_vs_solvers_500{family}"
    for family in ("", "_convex_qcqp", "_nonconvex_qp", "_nonsmooth_qp", "_nonconvex_qcqp")
) + ("fsnet_vs_solvers_500_nonsmooth_qcqp",)
FSNET_500_SOCP = (
    "fsnet_vs_solvers_500_convex_socp",
    *(
        f"fsnet_vs_solvers_500_{family}_socp{epochs}"
        for family in ("nonconvex", "nonsmooth")
        for epochs in ("", "_24_epochs")
    ),
)
HEPHAESTUS = "Hephaestus (QoS degradation)"
HEPHAESTUS_CLAIM = (
    "our approach consistently outperforms classical and ML baselines, particularly in scenarios "
    "with nonlinear cost functions"
)
CLAIMS_LEARNED = (
    Claim(
        system="classifier",
        paper="none (the project's reference testbed)",
        claim="-",
        metric="`python train.py` (digits CNN, 30 epochs, seed 0): test accuracy of the "
        "best-validation checkpoint; seconds of fit + test on the result's torch threads",
        result="testbeds",
        numbers=(
            Number("test accuracy", of_testbed("classifier", "test", "acc"), ".3f"),
            Number("seconds", of_testbed("classifier", "seconds"), ".0f"),
        ),
        published=False,
    ),
    Claim(
        system="char_lm",
        paper="none (the project's language-model testbed)",
        claim="-",
        metric="the README's AdamW run (10 x 100 steps, seed 0): best validation bits per "
        "character, test bits per character of that checkpoint",
        result="testbeds",
        numbers=(
            Number("val bpc", of_testbed("char_lm", "best_val"), ".3f"),
            Number("test bpc", of_testbed("char_lm", "test", "bpc"), ".3f"),
            Number("seconds", of_testbed("char_lm", "seconds"), ".0f", readme=False),
        ),
        published=False,
    ),
    Claim(
        system="vrp",
        paper="project goal (the batched VRP env behind MTL-KD)",
        claim="our env steps at least 2x RL4CO's instances per second on every variant",
        metric="instance-steps/s over RL4CO's, 16 variants, same process",
        result="vrp_env_throughput",
        numbers=(
            Number("slowest variant's speedup", lambda r: min(env_speedups(r)), ".2f"),
            Number("fastest variant's speedup", lambda r: max(env_speedups(r)), ".2f"),
            Number("median speedup", lambda r: statistics.median(env_speedups(r)), ".2f"),
        ),
        rule=Threshold(0, 2.0, partly=1.0, lower=False),
    ),
    Claim(
        system="vrp",
        paper=MTLKD,
        claim="single-task POMO teachers (the distillation's sources)",
        metric="CVRP50 teacher, x8 augmentation: gap % to MVMoE's published test-file solutions",
        result="mtlkd_mvmoe_suite_n50",
        numbers=(Number("CVRP teacher x8 gap %", at("rows", "CVRP", "teacher x8", "gap"), ".2f"),),
    ),
    Claim(
        system="mtlkd",
        paper=MTLKD,
        claim=MTLKD_CLAIM,
        metric="n = 50, MVMoE's test files: mean greedy gap % over the 6 seen variants",
        result="mtlkd_mvmoe_suite_n50",
        numbers=(
            Number("student greedy gap %", seen_mean("student greedy"), ".1f"),
            Number("MTPOMO greedy gap %", seen_mean("MTPOMO greedy"), ".1f"),
        ),
        rule=Better(0, (1,)),
    ),
    Claim(
        system="mtlkd",
        paper=MTLKD,
        claim=MTLKD_CLAIM,
        metric="CVRP, n = 1000, MVMoE's file (4 instances): greedy gap % to PyVRP",
        result="mtlkd_mvmoe_large",
        numbers=(
            Number("student greedy gap %", at(*CVRP1000, "student greedy", "gap"), ".1f"),
            Number("MTPOMO greedy gap %", at(*CVRP1000, "MTPOMO greedy", "gap"), ".0f"),
        ),
        rule=Better(0, (1,)),
    ),
    Claim(
        system="equality_constrained",
        paper="Equality-constrained statistical learning",
        claim="We showcase its effectiveness ... in fair learning, interpolating classifiers, and "
        "boundary value problems",
        metric="convection PINN (beta = 10): relative L2 error, mean +- std over 3 seeds",
        result="equality_constrained_pinn",
        numbers=(
            Number("constrained PINN rel L2", rel_l2(statistics.fmean, OURS_PINN), ".4f"),
            Number("its std", rel_l2(statistics.pstdev, OURS_PINN), ".4f"),
            Number("penalty PINN rel L2", rel_l2(statistics.fmean, PENALTY_PINN), ".3f"),
            Number("its std", rel_l2(statistics.pstdev, PENALTY_PINN), ".3f"),
        ),
        rule=Better(0, (2,)),
    ),
    Claim(
        system="equivariant",
        paper="Equivariance constraints and the loss landscape",
        claim="the parameter symmetries of the unconstrained model ... under certain conditions "
        "can provably prevent learning of the global minima ... relaxing to an unconstrained MLP "
        "can sometimes solve the issue",
        metric="share of seeds stuck (%) where teacher and student hidden representations differ",
        result="equivariant_landscape",
        numbers=(
            Number("constrained, fewest stuck", stuck(min, "constrained"), ".0f"),
            Number("constrained, most stuck", stuck(max, "constrained"), ".0f"),
            Number("relaxed, fewest stuck", stuck(min, "relaxed"), ".0f"),
            Number("relaxed, most stuck", stuck(max, "relaxed"), ".0f"),
        ),
        rule=Better(3, (0,)),
    ),
    fsnet_claim(
        metric="convex QP, 60 epochs: feasible share (%) and mean objective gap",
        result="fsnet_convex_nonsmooth_qp",
        numbers=(
            Number(
                "feasible %",
                scaled(at("results", "convex_qp", "summary", "fsnet", "feasible_rate"), 100),
                ".0f",
            ),
            Number(
                "mean gap",
                at("results", "convex_qp", "summary", "fsnet", "objective_gap_mean"),
                ".2e",
            ),
        ),
        rule=Every((Threshold(0, 100.0, lower=False), Threshold(1, 1e-3, partly=1e-2))),
    ),
    fsnet_claim(
        metric="convex QP, batch of 1024: OSQP warm-started (eps 1e-5) seconds over FSNet's "
        "(evaluation L-BFGS memory 5, and 30)",
        result="fsnet_vs_solvers_memory",
        numbers=(
            Number(
                "speedup over OSQP",
                ratio(
                    at("results", "convex_qp", "solvers", "osqp 1e-05 warm", "wall_seconds"),
                    at("results", "convex_qp", "fsnet", "5", "batch_seconds"),
                ),
                ".1f",
            ),
            Number(
                "with the paper's memory 30",
                ratio(
                    at("results", "convex_qp", "solvers", "osqp 1e-05 warm", "wall_seconds"),
                    at("results", "convex_qp", "fsnet", "30", "batch_seconds"),
                ),
                ".1f",
            ),
        ),
        rule=Threshold(0, 1.0, lower=False),
    ),
    fsnet_claim(
        metric="100 variables, batch of 1024: the matched warm-started solver's seconds over "
        "FSNet's on the convex QCQP / SOCP (cvxpy + Clarabel) and the six nonconvex / nonsmooth "
        "families (SLSQP; evaluation memory 30 and 5)",
        result="fsnet_vs_solvers",
        numbers=(
            Number("convex QCQP speedup", matched_speedup("convex_qcqp"), ".0f"),
            Number(
                "convex SOCP speedup",
                matched_speedup("convex_socp"),
                ".0f",
                result="fsnet_vs_solvers_more_families",
            ),
            *spread("nonconvex speedup", solver_speedups, FSNET_NONCONVEX),
        ),
        rule=Every(tuple(Threshold(index, 1.0, lower=False) for index in range(3))),
    ),
    fsnet_claim(
        metric="500 variables, QP and QCQP families (16-256 instances, 15-30 epochs): the "
        "matched warm-started solver's seconds over FSNet's",
        result="fsnet_vs_solvers_500",
        numbers=(*spread("speedup", solver_speedups, FSNET_500),),
        rule=Threshold(0, 1.0, lower=False),
    ),
    fsnet_claim(
        metric="500 variables, SOCP families: FSNet's mean gap (%) to the optimum after 8-24 "
        "epochs of CPU training (not judged: far shorter training than the paper's)",
        result="fsnet_vs_solvers_500_convex_socp",
        numbers=(*spread("gap %", gap_percents, FSNET_500_SOCP),),
    ),
    Claim(
        system="hephaestus",
        paper=HEPHAESTUS,
        claim=HEPHAESTUS_CLAIM,
        metric="synthetic instances, quadratic edge costs: Refine's budget over greedy's",
        result="hephaestus_quadratic_full",
        numbers=(
            Number(
                "feasible %",
                scaled(at("results", "quadratic", "summary", "refine", "feasible"), 100),
                ".0f",
            ),
            Number(
                "budget / greedy",
                at("results", "quadratic", "summary", "refine", "budget_ratio_greedy"),
                ".3f",
            ),
        ),
        rule=Every((Threshold(0, 100.0, lower=False), Threshold(1, 1.0))),
    ),
    Claim(
        system="hephaestus",
        paper=HEPHAESTUS,
        claim=HEPHAESTUS_CLAIM,
        metric="synthetic instances, linear edge costs: Refine's budget over the LP optimum "
        "(goal: within 5 %)",
        result="hephaestus_linear_full",
        numbers=(
            Number(
                "budget / LP optimum",
                at("results", "linear", "summary", "refine", "budget_ratio_lp"),
                ".3f",
            ),
        ),
        rule=Threshold(0, 1.05, partly=1.2),
    ),
    Claim(
        system="neural_es",
        paper="Neural-ES (Pareto set learning with evolution strategies)",
        claim="Experimental comparisons with other methods demonstrate the efficiency of Neural-ES",
        metric="psl1, D = 128, 2e4 evaluations, 5 seeds: archive IGD (known ideal point)",
        result="neural_es_known_ideal",
        numbers=(
            Number("Neural-ES IGD", igd("psl1", 128, "neural_es_known_ideal"), ".3f"),
            Number("NSGA-II IGD", igd("psl1", 128, "nsga2"), ".3f", result="neural_es"),
            Number("MOEA/D IGD", igd("psl1", 128, "moead"), ".3f", result="neural_es"),
            Number("ms per preference query", at("query", "model_ms_per_preference"), ".1f"),
        ),
        rule=Better(0, (1, 2)),
    ),
)
