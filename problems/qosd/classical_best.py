"""The best solution the classical baselines find on an instance (labels and yardstick).

Linear instances: the exact LP optimum (constraint generation). Nonlinear instances: the lowest
budget among pruned greedy path-stressing at lift quanta `GREEDY_QUANTA` (a tuned greedy: the
best quantum differs between convex and concave edge functions). Every candidate is checked.
"""

from __future__ import annotations

import numpy as np

from optiforge.problems.qosd.checker import check_solution
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.linear_program import solve_linear_program
from optiforge.problems.qosd.path_stressing import prune, stress_paths

GREEDY_QUANTA = (1.0, 0.1, 0.03)


def best_greedy(instance: QoSDInstance) -> np.ndarray:
    """Lowest-budget pruned greedy path-stressing over `GREEDY_QUANTA`."""
    candidates = [prune(instance, stress_paths(instance, lift_quantum=q)) for q in GREEDY_QUANTA]
    return min(candidates, key=lambda x: x.sum())


def classical_best(instance: QoSDInstance) -> np.ndarray:
    """LP optimum for linear instances, else `best_greedy`; checked before it is returned."""
    if instance.edge_function == "linear":
        x = solve_linear_program(instance).x
    else:
        x = best_greedy(instance)
    if not check_solution(instance, x).feasible:
        raise RuntimeError(f"{instance.name}: classical solution failed the checker")
    return x
