"""Black-box multi-objective problems with known Pareto fronts: the rotated Neural-ES PSL suite,
ZDT and DTLZ; the evaluation budget, archive, scalarisations and indicators around them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.problems.multiobjective.archive import ParetoArchive, dominates, non_dominated
    from optiforge.problems.multiobjective.budget import BudgetExhausted, EvaluationBudget
    from optiforge.problems.multiobjective.classic import DTLZ, ZDT
    from optiforge.problems.multiobjective.metrics import hypervolume, igd
    from optiforge.problems.multiobjective.problem import MultiObjectiveProblem
    from optiforge.problems.multiobjective.psl_suite import PARETO_SETS, RotatedPSLProblem
    from optiforge.problems.multiobjective.reference_directions import (
        lattice_near,
        simplex_lattice,
        uniform_simplex,
    )
    from optiforge.problems.multiobjective.registry import PROBLEMS, make_problem
    from optiforge.problems.multiobjective.scalarization import (
        SCALARIZATIONS,
        pbi,
        scalarize,
        tchebycheff,
    )

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
        "optiforge.problems.multiobjective.archive": (
            "ParetoArchive",
            "dominates",
            "non_dominated",
        ),
        "optiforge.problems.multiobjective.budget": ("BudgetExhausted", "EvaluationBudget"),
        "optiforge.problems.multiobjective.classic": ("DTLZ", "ZDT"),
        "optiforge.problems.multiobjective.metrics": ("hypervolume", "igd"),
        "optiforge.problems.multiobjective.problem": ("MultiObjectiveProblem",),
        "optiforge.problems.multiobjective.psl_suite": ("PARETO_SETS", "RotatedPSLProblem"),
        "optiforge.problems.multiobjective.reference_directions": (
            "lattice_near",
            "simplex_lattice",
            "uniform_simplex",
        ),
        "optiforge.problems.multiobjective.registry": ("PROBLEMS", "make_problem"),
        "optiforge.problems.multiobjective.scalarization": (
            "SCALARIZATIONS",
            "pbi",
            "scalarize",
            "tchebycheff",
        ),
    },
)
