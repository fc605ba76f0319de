"""Refine's last stage: descend the differentiable reward directly in perturbation space.

The latent search stays on the decoder's manifold; this stage leaves it. From a feasible x it
takes projected Adam steps on -smooth_reward (budget + penalty x smooth violation over the
instance's path pool, which grows with the shortest paths of every iterate), clamping x to
the box [0, cap] after each step. Every `repair_every` steps the iterate, as stress x / cap,
goes through PPS with the best solution so far as its fallback, so the result is feasible,
coordinate-wise minimal and never above `start` (PPS's guarantee). On linear instances the
smoothed problem is a penalized LP over the pool, so this approaches the LP optimum; on
nonlinear ones it is a local method.
"""

from __future__ import annotations

import numpy as np
import torch

from optiforge.lightning_modules.hephaestus.differentiable_reward import PathPool, smooth_reward
from optiforge.lightning_modules.hephaestus.predictive_path_stressing import (
    predictive_path_stressing,
)
from optiforge.problems.qosd.checker import check_solution
from optiforge.problems.qosd.instance import QoSDInstance


def descend_reward(
    instance: QoSDInstance,
    start: np.ndarray,
    steps: int = 100,
    lr: float = 0.05,
    penalty: float = 10.0,
    temperature: float = 0.02,
    repair_every: int = 25,
    pool: PathPool | None = None,
) -> np.ndarray:
    """Cheapest PPS repair of the iterates of `steps` reward-descent steps from feasible
    `start` (returned itself if nothing beats it)."""
    for name, value in (("steps", steps), ("repair_every", repair_every)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if np.shape(start) != (instance.num_edges,) or not check_solution(instance, start).feasible:
        raise ValueError(f"start must be a feasible perturbation of shape [{instance.num_edges}]")
    if pool is None:
        pool = PathPool(instance)
    pool.add_shortest_paths(start)
    with torch.inference_mode(False), torch.enable_grad():  # also under Lightning's test loop
        return _descend(instance, start, steps, lr, penalty, temperature, repair_every, pool)


def _descend(
    instance: QoSDInstance,
    start: np.ndarray,
    steps: int,
    lr: float,
    penalty: float,
    temperature: float,
    repair_every: int,
    pool: PathPool,
) -> np.ndarray:
    cap = torch.from_numpy(instance.cap)
    x = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([x], lr=lr)
    best = np.asarray(start, dtype=np.float64)
    scale = np.maximum(instance.cap, 1e-12)
    for step in range(1, steps + 1):
        loss = -smooth_reward(pool, x[None], penalty, temperature).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            x.clamp_(torch.zeros_like(cap), cap)
        iterate = x.detach().numpy().copy()
        pool.add_shortest_paths(iterate)
        if step % repair_every == 0 or step == steps:
            stress = np.clip(iterate / scale, 0.0, 1.0)
            best = predictive_path_stressing(instance, stress, fallback=best)
    return best
