"""Build any problem of the package by name."""

from __future__ import annotations

from optiforge.problems.multiobjective.classic import DTLZ, ZDT
from optiforge.problems.multiobjective.problem import MultiObjectiveProblem
from optiforge.problems.multiobjective.psl_suite import PARETO_SETS, RotatedPSLProblem

PROBLEMS = (*PARETO_SETS, "zdt1", "zdt2", "dtlz1", "dtlz2")


def make_problem(name: str, dim: int, seed: int = 1, num_obj: int = 3) -> MultiObjectiveProblem:
    """The problem `name` (one of PROBLEMS) at dimension `dim`; `seed` fixes the PSL rotations,
    `num_obj` the DTLZ objective count."""
    if name in PARETO_SETS:
        return RotatedPSLProblem(name, dim, seed)
    if name in ("zdt1", "zdt2"):
        return ZDT(name, dim)
    if name in ("dtlz1", "dtlz2"):
        return DTLZ(name, dim, num_obj)
    raise ValueError(f"name must be one of {list(PROBLEMS)}, got {name!r}")
