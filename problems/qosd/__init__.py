"""Quality-of-Service Degradation (QoSD): instances, exact checker, generators, real data and
classical baselines (greedy / random path-stressing with pruning, LP constraint generation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.problems.qosd.checker import SolutionCheck, check_solution, pair_distances
    from optiforge.problems.qosd.edge_functions import (
        EDGE_FUNCTIONS,
        edge_weights,
        perturbation_for_weight,
    )
    from optiforge.problems.qosd.generators import (
        GRAPH_MODELS,
        SyntheticQoSDConfig,
        generate_instance,
    )
    from optiforge.problems.qosd.gnutella import load_gnutella08
    from optiforge.problems.qosd.instance import QoSDInstance
    from optiforge.problems.qosd.linear_program import LinearProgramResult, solve_linear_program
    from optiforge.problems.qosd.path_stressing import EDGE_RULES, prune, stress_paths

__all__ = [
    "EDGE_FUNCTIONS",
    "EDGE_RULES",
    "GRAPH_MODELS",
    "LinearProgramResult",
    "QoSDInstance",
    "SolutionCheck",
    "SyntheticQoSDConfig",
    "check_solution",
    "edge_weights",
    "generate_instance",
    "load_gnutella08",
    "pair_distances",
    "perturbation_for_weight",
    "prune",
    "solve_linear_program",
    "stress_paths",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.problems.qosd.checker": ("SolutionCheck", "check_solution", "pair_distances"),
        "optiforge.problems.qosd.edge_functions": (
            "EDGE_FUNCTIONS",
            "edge_weights",
            "perturbation_for_weight",
        ),
        "optiforge.problems.qosd.generators": (
            "GRAPH_MODELS",
            "SyntheticQoSDConfig",
            "generate_instance",
        ),
        "optiforge.problems.qosd.gnutella": ("load_gnutella08",),
        "optiforge.problems.qosd.instance": ("QoSDInstance",),
        "optiforge.problems.qosd.linear_program": ("LinearProgramResult", "solve_linear_program"),
        "optiforge.problems.qosd.path_stressing": ("EDGE_RULES", "prune", "stress_paths"),
    },
)
