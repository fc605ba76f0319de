"""Black-box multi-objective problems with known Pareto fronts: the rotated Neural-ES PSL suite,
ZDT and DTLZ; the evaluation budget, archive, scalarisations and indicators around them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from problems.multiobjective.archive import ParetoArchive, dominates, non_dominated
    from problems.multiobjective.budget import BudgetExhausted, EvaluationBudget
    from problems.multiobjective.classic import DTLZ, ZDT
    from problems.multiobjective.metrics import hypervolume, igd
    from problems.multiobjective.problem import MultiObjectiveProblem
    from problems.multiobjective.psl_suite import PARETO_SETS, RotatedPSLProblem
    from problems.multiobjective.reference_directions import (
        lattice_near,
        simplex_lattice,
        uniform_simplex,
    )
    from problems.multiobjective.registry import PROBLEMS, make_problem
    from problems.multiobjective.scalarization import SCALARIZATIONS, pbi, scalarize, tchebycheff

__all__ = [
    "DTLZ",
    "PARETO_SETS",
    "PROBLEMS",
    "SCALARIZATIONS",
    "ZDT",
    "BudgetExhausted",
    "EvaluationBudget",
    "MultiObjectiveProblem",
    "ParetoArchive",
    "RotatedPSLProblem",
    "dominates",
    "hypervolume",
    "igd",
    "lattice_near",
    "make_problem",
    "non_dominated",
    "pbi",
    "scalarize",
    "simplex_lattice",
    "tchebycheff",
    "uniform_simplex",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "problems.multiobjective.archive": ("ParetoArchive", "dominates", "non_dominated"),
        "problems.multiobjective.budget": ("BudgetExhausted", "EvaluationBudget"),
        "problems.multiobjective.classic": ("DTLZ", "ZDT"),
        "problems.multiobjective.metrics": ("hypervolume", "igd"),
        "problems.multiobjective.problem": ("MultiObjectiveProblem",),
        "problems.multiobjective.psl_suite": ("PARETO_SETS", "RotatedPSLProblem"),
        "problems.multiobjective.reference_directions": (
            "lattice_near",
            "simplex_lattice",
            "uniform_simplex",
        ),
        "problems.multiobjective.registry": ("PROBLEMS", "make_problem"),
        "problems.multiobjective.scalarization": (
            "SCALARIZATIONS",
            "pbi",
            "scalarize",
            "tchebycheff",
        ),
    },
)
