"""Quality-of-Service Degradation (QoSD): instances, exact checker, generators, real data and
classical baselines (greedy / random path-stressing with pruning, LP constraint generation)."""

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
