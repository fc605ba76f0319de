"""Per-instance evaluation of a QoSD solver next to the classical baselines, all checked.

For each instance: the method's solution, pruned greedy path-stressing, the tuned greedy (best
pruned greedy over three lift quanta: a stronger classical yardstick, and the training label on
nonlinear instances), the tuned greedy improved by `descend_reward` (Refine's last stage on a
classical start: what the learned phases add beyond it), random feasible path-stressing
(unpruned: the plain random baseline), and the LP optimum on linear instances;
budgets, feasibility by the exact checker, and wall times. `budget_ratio_lp` /
`budget_ratio_greedy` compare the method with the optimum / the greedy on the same instance
(`greedy_descent_ratio_lp`: the descended tuned greedy with the optimum;
`greedy_descent_seconds`: tuned greedy plus descent, from scratch). The baselines are
computed once per instance object, so testing several phases does not repeat them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

import numpy as np

from optiforge.lightning_modules.hephaestus.reward_descent import descend_reward
from optiforge.problems.qosd.checker import check_solution
from optiforge.problems.qosd.classical_best import best_greedy
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.linear_program import solve_linear_program
from optiforge.problems.qosd.path_stressing import prune, stress_paths


@dataclass(frozen=True)
class Baselines:
    """The classical solutions of one instance (each passed the checker) and their times."""

    greedy: np.ndarray
    greedy_seconds: float
    random: np.ndarray
    tuned: np.ndarray
    descended: np.ndarray
    descent_seconds: float
    optimum: np.ndarray | None
    lp_seconds: float | None


_BASELINES: WeakKeyDictionary[QoSDInstance, Baselines] = WeakKeyDictionary()


def timed(solve: Callable[[], np.ndarray]) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    x = solve()
    return x, time.perf_counter() - start


def baselines(instance: QoSDInstance) -> Baselines:
    """The instance's baselines, computed once per instance object (every phase tested on
    the same instances compares with the same, checked, solutions)."""
    if instance not in _BASELINES:
        greedy, greedy_seconds = timed(lambda: prune(instance, stress_paths(instance)))
        start = time.perf_counter()
        tuned = best_greedy(instance)
        descended = descend_reward(instance, tuned)
        descent_seconds = time.perf_counter() - start
        random = stress_paths(instance, rule="random", seed=0)
        optimum, lp_seconds = None, None
        if instance.edge_function == "linear":
            optimum, lp_seconds = timed(lambda: solve_linear_program(instance).x)
        found = {"greedy": greedy, "random": random, "tuned greedy": tuned, "descent": descended}
        for name, x in found.items():
            if not check_solution(instance, x).feasible:
                raise RuntimeError(f"{instance.name}: the {name} baseline failed the checker")
        _BASELINES[instance] = Baselines(
            greedy, greedy_seconds, random, tuned, descended, descent_seconds, optimum, lp_seconds
        )
    return _BASELINES[instance]


def evaluate_instance(
    instance: QoSDInstance, solve: Callable[[np.ndarray], np.ndarray]
) -> dict[str, float]:
    """Metrics of `solve(greedy_solution)` on `instance` beside the baselines."""
    base = baselines(instance)
    method, seconds = timed(lambda: solve(base.greedy))
    check = check_solution(instance, method)
    metrics = {
        "budget": check.budget,
        "feasible": float(check.feasible),
        "seconds": seconds,
        "budget_greedy": float(base.greedy.sum()),
        "greedy_seconds": base.greedy_seconds,
        "budget_random": float(base.random.sum()),
        "budget_ratio_greedy": check.budget / max(float(base.greedy.sum()), 1e-12),
        "budget_greedy_tuned": float(base.tuned.sum()),
        "budget_ratio_greedy_tuned": check.budget / max(float(base.tuned.sum()), 1e-12),
        "budget_greedy_descent": float(base.descended.sum()),
        "budget_ratio_greedy_descent": check.budget / max(float(base.descended.sum()), 1e-12),
        "greedy_descent_seconds": base.descent_seconds,
    }
    if base.optimum is not None:
        optimum = max(float(base.optimum.sum()), 1e-12)
        metrics |= {
            "budget_lp": float(base.optimum.sum()),
            "lp_seconds": base.lp_seconds,
            "budget_ratio_lp": check.budget / optimum,
            "greedy_descent_ratio_lp": float(base.descended.sum()) / optimum,
        }
    return metrics
