"""Tchebycheff and PBI values by hand; the scalarisation name is checked."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.problems.multiobjective import pbi, scalarize, tchebycheff


def test_tchebycheff_by_hand() -> None:
    """max((1 - 0)/0.5, (3 - 1)/0.5) = 4; a zero weight makes its objective dominate."""
    f = torch.tensor([[1.0, 3.0], [1.0, 1.5]], dtype=torch.float64)
    pref = torch.tensor([[0.5, 0.5], [1.0, 0.0]])
    value = tchebycheff(f, pref.double(), torch.tensor([0.0, 1.0], dtype=torch.float64))
    assert value[0] == 4.0 and math.isclose(float(value[1]), 0.5 / 1e-16)


def test_pbi_by_hand() -> None:
    """f = (1, 0) against direction (1, 1)/sqrt 2: d1 = d2 = 1/sqrt 2, so d1 + 5 d2 = 6/sqrt 2."""
    f = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    pref = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    value = pbi(f, pref, torch.zeros(2, dtype=torch.float64), theta=5.0)
    assert math.isclose(float(value), 6 / math.sqrt(2), rel_tol=1e-12)


def test_unknown_scalarization_is_refused() -> None:
    """An unknown method name raises ValueError listing the allowed ones."""
    with pytest.raises(ValueError, match="method must be one of"):
        scalarize(torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(2), "weighted_sum")  # type: ignore[arg-type]
