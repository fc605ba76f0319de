"""The evaluation budget: exact counting, refusal past the budget, the penalty rule."""

from __future__ import annotations

import pytest
import torch

from optiforge.problems.multiobjective import ZDT, BudgetExhausted, EvaluationBudget


def test_counts_exactly_and_refuses_past_the_budget() -> None:
    """Batches are counted row by row; a batch beyond the remainder is refused uncounted."""
    budget = EvaluationBudget(ZDT("zdt1", 3), max_evaluations=10)
    budget.evaluate(torch.rand(7, 3, dtype=torch.float64))
    assert budget.used == 7 and budget.remaining == 3
    with pytest.raises(BudgetExhausted):
        budget.evaluate(torch.rand(4, 3, dtype=torch.float64))
    assert budget.used == 7
    budget.evaluate(torch.rand(3, 3, dtype=torch.float64))
    assert budget.remaining == 0


def test_penalty_rule_values_by_hand() -> None:
    """An out-of-box point is scored at its projection plus penalty * (1 + distance); in-box
    points are untouched and only in-box points are archived."""
    problem = ZDT("zdt1", 2)
    budget = EvaluationBudget(problem, out_of_box="penalty", penalty=10.0)
    x = torch.tensor([[0.25, 0.0], [1.25, 0.0]], dtype=torch.float64)
    f = budget.evaluate(x)
    assert torch.allclose(f[0], torch.tensor([0.25, 0.5], dtype=torch.float64))
    assert torch.allclose(f[1], torch.tensor([1.0, 0.0], dtype=torch.float64) + 10.0 * 1.25)
    assert len(budget.archive.f) == 1


def test_bad_settings_and_out_of_box_points_are_refused() -> None:
    """Refuse mode names x; bad budget settings name their argument."""
    budget = EvaluationBudget(ZDT("zdt1", 2))
    with pytest.raises(ValueError, match="x: points outside the box"):
        budget.evaluate(torch.tensor([[-0.1, 0.0]], dtype=torch.float64))
    with pytest.raises(ValueError, match="max_evaluations"):
        EvaluationBudget(ZDT("zdt1", 2), max_evaluations=0)
    with pytest.raises(ValueError, match="out_of_box must be one of"):
        EvaluationBudget(ZDT("zdt1", 2), out_of_box="clip")  # type: ignore[arg-type]
