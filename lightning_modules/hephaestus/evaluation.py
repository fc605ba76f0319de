"""Per-instance evaluation of a QoSD solver next to the classical baselines, all checked.

For each instance: the method's solution, pruned greedy path-stressing, the tuned greedy (best
pruned greedy over three lift quanta: a stronger classical yardstick, and the training label on
nonlinear instances), the tuned greedy improved by `descend_reward` (Refine's last stage on a
classical start: what the learned phases add beyond it), random feasible path-stressing
(unpruned: the plain random baseline), and the LP optimum on linear instances;
budgets, feasibility by the exact checker, and wall times. `budget_ratio_lp` /
`budget_ratio_greedy` compare the method with the optimum / the greedy on the same instance.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from lightning_modules.hephaestus.reward_descent import descend_reward
from problems.qosd.checker import check_solution
from problems.qosd.classical_best import best_greedy
from problems.qosd.instance import QoSDInstance
from problems.qosd.linear_program import solve_linear_program
from problems.qosd.path_stressing import prune, stress_paths


def timed(solve: Callable[[], np.ndarray]) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    x = solve()
    return x, time.perf_counter() - start


def evaluate_instance(
    instance: QoSDInstance, solve: Callable[[np.ndarray], np.ndarray]
) -> dict[str, float]:
    """Metrics of `solve(greedy_solution)` on `instance` beside the baselines."""
    greedy, greedy_seconds = timed(lambda: prune(instance, stress_paths(instance)))
    method, seconds = timed(lambda: solve(greedy))
    random = stress_paths(instance, rule="random", seed=0)
    tuned = best_greedy(instance)
    descended = descend_reward(instance, tuned)
    check = check_solution(instance, method)
    metrics = {
        "budget": check.budget,
        "feasible": float(check.feasible),
        "seconds": seconds,
        "budget_greedy": float(greedy.sum()),
        "greedy_seconds": greedy_seconds,
        "budget_random": float(random.sum()),
        "budget_ratio_greedy": check.budget / max(float(greedy.sum()), 1e-12),
        "budget_greedy_tuned": float(tuned.sum()),
        "budget_ratio_greedy_tuned": check.budget / max(float(tuned.sum()), 1e-12),
        "budget_greedy_descent": float(descended.sum()),
        "budget_ratio_greedy_descent": check.budget / max(float(descended.sum()), 1e-12),
    }
    baselines = {"greedy": greedy, "random": random, "tuned greedy": tuned, "descent": descended}
    for name, x in baselines.items():
        if not check_solution(instance, x).feasible:
            raise RuntimeError(f"{instance.name}: the {name} baseline failed the checker")
    if instance.edge_function == "linear":
        optimum, lp_seconds = timed(lambda: solve_linear_program(instance).x)
        metrics |= {
            "budget_lp": float(optimum.sum()),
            "lp_seconds": lp_seconds,
            "budget_ratio_lp": check.budget / max(float(optimum.sum()), 1e-12),
        }
    return metrics
