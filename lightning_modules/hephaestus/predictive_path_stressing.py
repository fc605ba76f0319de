"""Predictive Path-Stressing (PPS): turn predicted edge stress into a feasible QoSD solution.

Procedure, for predicted stress s in [0, 1]^E, three candidates, the cheapest wins:
1. guided: greedy path-stressing from zero whose edge score (gain per unit budget) is
   multiplied by `floor + s_e`, so predicted edges are stressed first; then pruned;
2. seeded: start from x0 = s * cap (inside the box by construction), path-stress until every
   pair reaches T, prune (its group testing drops the many small, useless seeds cheaply);
3. plain pruned greedy path-stressing (passed in as `fallback` when already computed).

Guarantee (tested): the output is feasible (it passes the exact checker), coordinate-wise
minimal (no single edge can be lowered without some pair dropping below T), and its budget is
at most that of pruned greedy path-stressing on the same instance, whatever the prediction.
The prediction only ever helps: a useless s costs a second greedy run, never feasibility.
"""

from __future__ import annotations

import numpy as np

from optiforge.problems.qosd.checker import check_solution
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.path_stressing import prune, stress_paths

PRIORITY_FLOOR = 0.01


def predictive_path_stressing(
    instance: QoSDInstance, stress: np.ndarray, fallback: np.ndarray | None = None
) -> np.ndarray:
    """Feasible, minimal x no worse than pruned greedy (or than `fallback` when given)."""
    stress = np.asarray(stress, dtype=np.float64)
    if stress.shape != (instance.num_edges,) or not np.all((stress >= 0) & (stress <= 1)):
        raise ValueError(f"stress must have shape [{instance.num_edges}] with values in [0, 1]")
    guided = prune(instance, stress_paths(instance, priority=PRIORITY_FLOOR + stress))
    start = np.minimum(stress * instance.cap, instance.cap)
    seeded = prune(instance, stress_paths(instance, start=start))
    if fallback is None:
        fallback = prune(instance, stress_paths(instance))
    best = min((guided, seeded, fallback), key=lambda x: x.sum())
    if not check_solution(instance, best).feasible:
        raise RuntimeError(f"{instance.name}: PPS produced an infeasible point")
    return best
