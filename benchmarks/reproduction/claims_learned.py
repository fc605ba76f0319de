"""Claims of the learned systems: testbeds, VRP / MTL-KD, constrained learning, equivariant MLPs,
FSNet, Hephaestus, Neural-ES. Each number is read from its published result."""

from __future__ import annotations

import statistics
from typing import Any

from optiforge.benchmarks.reproduction.model import Better, Claim, Every, Number, Threshold
from optiforge.benchmarks.reproduction.select import Getter, at, field, ratio, rows, scaled

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
        metric="test accuracy of `python train.py` (a training run, not a published result)",
        result=None,
    ),
    Claim(
        system="char_lm",
        paper="none (the project's language-model testbed)",
        claim="-",
        metric="validation / test bits per character (a training run, not a published result)",
        result=None,
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
    Claim(
        system="fsnet",
        paper=FSNET,
        claim=FSNET_CLAIM,
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
    Claim(
        system="fsnet",
        paper=FSNET,
        claim=FSNET_CLAIM,
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
