"""Every method of the Neural-ES benchmark stays within its evaluation budget."""

from __future__ import annotations

import pytest
import torch

from optiforge.benchmarks.neural_es_baselines import (
    run_neural_es,
    run_psl_pgpe,
    run_pymoo,
    run_random_search,
)
from optiforge.problems.multiobjective import EvaluationBudget, make_problem


@pytest.mark.parametrize(
    ("method", "exact"),
    [("random", True), ("nsga2", True), ("moead", True), ("smsemoa", True), ("psl_pgpe", False)],
)
def test_baselines_respect_the_budget(method: str, exact: bool) -> None:
    """Random search and pymoo spend exactly 250 evaluations; PGPE whole generations of 200
    (EvoTorch is in the bench extra only: that case is skipped without it)."""
    if method == "psl_pgpe":
        pytest.importorskip("evotorch")
    budget = EvaluationBudget(make_problem("psl1", 4), max_evaluations=250)
    if method == "random":
        run_random_search(budget, 0, batch=100)
    elif method == "psl_pgpe":
        run_psl_pgpe(budget, 0, hidden=4, popsize=20, prefs_per_step=10)
    else:
        run_pymoo(budget, 0, method)
    assert budget.used == (250 if exact else 200)
    assert budget.archive.f is not None and len(budget.archive.f) > 0


def test_neural_es_respects_the_budget_and_reruns_reproduce() -> None:
    """D = 4: K = 1 preference x N = 4 samples per step, so 250 evaluations allow 62 steps;
    the same seed gives the same archive."""
    problem = make_problem("psl1", 4)
    runs = []
    for _ in range(2):
        budget = EvaluationBudget(problem, 250, out_of_box="penalty")
        run_neural_es(budget, 3, hidden=8, num_blocks=2)
        runs.append(budget)
    assert runs[0].used == 248
    assert torch.equal(runs[0].archive.f, runs[1].archive.f)


def test_authors_defaults_method_builds_the_authors_model() -> None:
    """`neural_es_authors` is the authors' 2 x 1024 set model with the known ideal point (the
    origin): a budget below one step (K N = 10 x 7 at D = 32) returns it untrained."""
    from optiforge.benchmarks.neural_es import METHODS

    budget = EvaluationBudget(make_problem("psl1", 32), 10, out_of_box="penalty")
    result = METHODS["neural_es_authors"](budget, 0)
    widths = [layer.out_features for layer in result["model"].body if hasattr(layer, "weight")]
    assert widths == [1024, 1024] and budget.used == 0
    assert torch.equal(result["ideal"], torch.zeros(2, dtype=torch.float64))
