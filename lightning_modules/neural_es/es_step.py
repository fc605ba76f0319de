"""One Neural-ES iteration: sample per preference, evaluate black-box, rank, build the loss.

Shared by the LightningModule and the plain benchmark loop. Population constants reproduced
from the authors' code: `K = 5 D / 16` preferences per step and `N = 2 + round(1.5 ln D)`
samples per preference; fitness is the scalarisation against the running ideal point, with the
`1e20` out-of-box penalty applied by the `EvaluationBudget`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from optiforge.lightning_modules.neural_es.model import ParetoSetModel
from optiforge.lightning_modules.neural_es.surrogate import (
    natural_gradient_surrogate,
    weights_from_fitness,
)
from optiforge.problems.multiobjective.budget import EvaluationBudget
from optiforge.problems.multiobjective.scalarization import running_ideal, scalarize


def default_preferences(dim: int) -> int:
    """`K = max(1, 5 D // 16)` preferences per step (the authors' default)."""
    return max(1, 5 * dim // 16)


def default_samples(dim: int) -> int:
    """`N = 2 + round(1.5 ln D)` samples per preference (the authors' default)."""
    return 2 + round(1.5 * math.log(dim))


@dataclass
class StepResult:
    """The surrogate loss (to backpropagate), the updated ideal point and the evaluated batch."""

    loss: Tensor
    ideal: Tensor
    x: Tensor
    f: Tensor


def neural_es_step(
    model: ParetoSetModel,
    budget: EvaluationBudget,
    prefs: Tensor,
    num_samples: int,
    ideal: Tensor,
    generator: torch.Generator,
    scalarization: Literal["tchebycheff", "pbi"] = "tchebycheff",
    pbi_theta: float = 5.0,
) -> StepResult:
    """Draw `num_samples` solutions for each of `prefs [K, M]`, evaluate them through `budget`
    (K * N evaluations), rank them within each preference and return the surrogate loss."""
    repeated = prefs.repeat_interleave(num_samples, dim=0)
    noise = torch.randn(
        len(repeated), model.dim, generator=generator, device=generator.device, dtype=prefs.dtype
    )
    x, params = model(repeated, noise)
    f = budget.evaluate(x.double())
    ideal = running_ideal(ideal, f)
    fitness = scalarize(f, repeated.double(), ideal, scalarization, pbi_theta)
    weights = weights_from_fitness(fitness, num_samples)
    return StepResult(natural_gradient_surrogate(x, params, weights), ideal, x, f)
