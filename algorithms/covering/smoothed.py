"""Gaussian-smoothed zeroth-order descent on the covering radius, batched over restarts.

The covering radius r(c) is Lipschitz but not differentiable, so the paper minimises its
Gaussian smoothing r_sigma(c) = E_u r(c + sigma u), u ~ N(0, I_{2n}), whose gradient is
estimated from values only: g = (1/m) sum_k (r(c + sigma u_k) - r(c)) / sigma * u_k. Each
restart takes c <- c - lr_t g with sigma_t and lr_t decaying geometrically from their initial to
their final values (the smoothing shrinks so the iterates settle on a minimiser of r itself).
All restarts advance together as one [B, n, 2] tensor; one step costs m + 1 evaluations each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from optiforge.algorithms.covering.validation import check_count, check_finite_positive

Objective = Callable[[Tensor], Tensor]  # centres [B, n, 2] -> radius [B]


@dataclass(frozen=True)
class Descent:
    """Outcome of one batched run: per restart the best configuration evaluated and its radius,
    the best-so-far radius after every step, and the evaluations each restart used."""

    centres: Tensor  # [B, n, 2]
    radius: Tensor  # [B]
    trace: Tensor  # [steps, B] best radius so far
    evaluations: int  # per restart


@dataclass(frozen=True)
class SmoothedZerothOrder:
    """The smoothed zeroth-order method: `steps` iterations, `samples` directions per step,
    smoothing `sigma` -> `sigma_final`, step size `lr` -> `lr_final` (geometric schedules).
    The defaults suit sets of diameter about 1-2 (unit square, unit disk); scale sigma and lr
    with the set."""

    sigma: float = 0.1
    sigma_final: float = 1e-4
    lr: float = 0.05
    lr_final: float = 1e-5
    steps: int = 2000
    samples: int = 8

    def __post_init__(self) -> None:
        for name in ("sigma", "sigma_final", "lr", "lr_final"):
            check_finite_positive(name, getattr(self, name))
        check_count("steps", self.steps)
        check_count("samples", self.samples)

    @property
    def evaluations(self) -> int:
        """Evaluations of r per restart: r(c) and m perturbed values at each step."""
        return self.steps * (self.samples + 1)

    def schedule(self, start: float, final: float, step: int) -> float:
        """Geometric interpolation from `start` (step 0) to `final` (last step)."""
        fraction = step / max(self.steps - 1, 1)
        return start * math.exp(fraction * math.log(final / start))

    def run(self, objective: Objective, start: Tensor, generator: torch.Generator) -> Descent:
        """Descend from `start [B, n, 2]`; `generator` lives on the same device as `start`."""
        centres = start.clone()
        batch, n = centres.shape[:2]
        best_radius = torch.full((batch,), math.inf, dtype=centres.dtype, device=centres.device)
        best = centres.clone()
        trace = []
        for step in range(self.steps):
            sigma = self.schedule(self.sigma, self.sigma_final, step)
            lr = self.schedule(self.lr, self.lr_final, step)
            u = torch.randn(
                (batch, self.samples, n, 2),
                generator=generator,
                dtype=centres.dtype,
                device=centres.device,
            )
            trial = torch.cat((centres[:, None], centres[:, None] + sigma * u), 1)
            values = objective(trial.flatten(0, 1)).reshape(batch, self.samples + 1)
            slopes = (values[:, 1:] - values[:, :1]) / sigma
            gradient = (slopes[..., None, None] * u).mean(1)
            lowest, where = values.min(1)
            better = lowest < best_radius
            chosen = trial[torch.arange(batch, device=centres.device), where]
            best = torch.where(better[:, None, None], chosen, best)
            best_radius = torch.minimum(lowest, best_radius)
            trace.append(best_radius.clone())
            centres = centres - lr * gradient
        return Descent(best, best_radius, torch.stack(trace), self.evaluations)
