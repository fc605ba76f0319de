"""Parametric constrained-optimization families (FSNet, DC3), cached datasets, reference solvers.

`make_family(name, ...)` draws a family from a seed; its torch functions (objective, residuals,
violations) are batched and differentiable; `solve_reference` gives timed, checked solutions;
`build_dataset` ties both together behind an atomic .npz cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.problems.constrained.dataset import (
        ConstrainedDataset,
        build_dataset,
        load_dataset,
        save_dataset,
    )
    from optiforge.problems.constrained.family import OBJECTIVE_KINDS, ConstrainedFamily, Violation
    from optiforge.problems.constrained.linear import LinearInequalityFamily
    from optiforge.problems.constrained.quadratic import QuadraticInequalityFamily
    from optiforge.problems.constrained.reference_solvers import (
        FEASIBILITY_TOLERANCE,
        SOLVERS,
        PointCheck,
        ReferenceSolutions,
        check_points,
        cvxpy_feasible_set,
        default_solver,
        solve_reference,
    )
    from optiforge.problems.constrained.registry import (
        DEFAULT_PROBLEM,
        FAMILIES,
        ProblemSpec,
        make_family,
    )
    from optiforge.problems.constrained.second_order_cone import SecondOrderConeFamily

__all__ = [
    "DEFAULT_PROBLEM",
    "FAMILIES",
    "OBJECTIVE_KINDS",
    "ProblemSpec",
    "ConstrainedFamily",
    "Violation",
    "make_family",
]
__all__ += ["LinearInequalityFamily", "QuadraticInequalityFamily", "SecondOrderConeFamily"]
__all__ += ["FEASIBILITY_TOLERANCE", "SOLVERS", "PointCheck", "ReferenceSolutions"]
__all__ += ["check_points", "cvxpy_feasible_set", "default_solver", "solve_reference"]
__all__ += ["ConstrainedDataset", "build_dataset", "load_dataset", "save_dataset"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.problems.constrained.dataset": (
            "ConstrainedDataset",
            "build_dataset",
            "load_dataset",
            "save_dataset",
        ),
        "optiforge.problems.constrained.family": (
            "OBJECTIVE_KINDS",
            "ConstrainedFamily",
            "Violation",
        ),
        "optiforge.problems.constrained.linear": ("LinearInequalityFamily",),
        "optiforge.problems.constrained.quadratic": ("QuadraticInequalityFamily",),
        "optiforge.problems.constrained.reference_solvers": (
            "FEASIBILITY_TOLERANCE",
            "SOLVERS",
            "PointCheck",
            "ReferenceSolutions",
            "check_points",
            "cvxpy_feasible_set",
            "default_solver",
            "solve_reference",
        ),
        "optiforge.problems.constrained.registry": (
            "DEFAULT_PROBLEM",
            "FAMILIES",
            "ProblemSpec",
            "make_family",
        ),
        "optiforge.problems.constrained.second_order_cone": ("SecondOrderConeFamily",),
    },
)
