"""Quality-of-Service Degradation (QoSD): instances, exact checker, generators, real data and
classical baselines (greedy / random path-stressing with pruning, LP constraint generation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from problems.qosd.checker import SolutionCheck, check_solution, pair_distances
    from problems.qosd.edge_functions import EDGE_FUNCTIONS, edge_weights, perturbation_for_weight
    from problems.qosd.generators import GRAPH_MODELS, SyntheticQoSDConfig, generate_instance
    from problems.qosd.gnutella import load_gnutella08
    from problems.qosd.instance import QoSDInstance
    from problems.qosd.linear_program import LinearProgramResult, solve_linear_program
    from problems.qosd.path_stressing import EDGE_RULES, prune, stress_paths

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
        "problems.qosd.checker": ("SolutionCheck", "check_solution", "pair_distances"),
        "problems.qosd.edge_functions": (
            "EDGE_FUNCTIONS",
            "edge_weights",
            "perturbation_for_weight",
        ),
        "problems.qosd.generators": ("GRAPH_MODELS", "SyntheticQoSDConfig", "generate_instance"),
        "problems.qosd.gnutella": ("load_gnutella08",),
        "problems.qosd.instance": ("QoSDInstance",),
        "problems.qosd.linear_program": ("LinearProgramResult", "solve_linear_program"),
        "problems.qosd.path_stressing": ("EDGE_RULES", "prune", "stress_paths"),
    },
)
