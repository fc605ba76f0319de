"""One Neural-ES step on every device: evaluations counted, batch on the model's device."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.lightning_modules.neural_es.es_step import (
    default_preferences,
    default_samples,
    neural_es_step,
)
from optiforge.lightning_modules.neural_es.model import ParetoSetModel
from optiforge.problems.multiobjective import EvaluationBudget, make_problem, uniform_simplex
from tests.devices import DEVICES


def test_default_population_sizes() -> None:
    """The authors' K = 5 D / 16 and N = 2 + round(1.5 ln D): D = 128 gives 40 and 9."""
    assert default_preferences(128) == 40 and default_samples(128) == 9
    assert default_preferences(3) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_step_counts_evaluations_and_stays_on_device(device: str) -> None:
    """K x N evaluations are counted; the ideal point only decreases; the loss backpropagates
    into every parameter of the model."""
    torch.manual_seed(0)
    model = ParetoSetModel(8, 3, num_blocks=2, hidden_sizes=(16,)).to(device)
    budget = EvaluationBudget(make_problem("psl6", 8), 1000, out_of_box="penalty")
    generator = torch.Generator(device=device).manual_seed(0)
    ideal = torch.full((3,), math.inf, dtype=torch.float64, device=device)
    prefs = uniform_simplex(4, 3, generator).float()
    step = neural_es_step(model, budget, prefs, 5, ideal, generator, "pbi", 5.0)
    assert budget.used == 20 and step.x.device.type == device
    assert (step.ideal <= step.f.min(0).values + 1e-12).all()
    step.loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
