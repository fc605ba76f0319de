"""IGD and hypervolume of hand-made fronts against hand-computed values."""

from __future__ import annotations

import math

import torch

from optiforge.problems.multiobjective import hypervolume, igd


def test_igd_by_hand() -> None:
    """Two corner points against a three-point front: distances 0, sqrt(1/2), 0."""
    f = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    front = torch.tensor([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    assert math.isclose(igd(f, front), math.sqrt(0.5) / 3, rel_tol=1e-12)
    assert igd(torch.empty(0, 2), front) == math.inf


def test_hypervolume_by_hand() -> None:
    """2-D: two boxes of area 2 and 1; 3-D: 0.5 + 0.25 - overlap 0.125; points beyond the
    reference count nothing."""
    f = torch.tensor([[0.0, 1.0], [1.0, 0.0], [3.0, 3.0]])
    assert math.isclose(hypervolume(f, torch.tensor([2.0, 2.0])), 3.0)
    g = torch.tensor([[0.0, 0.0, 0.5], [0.5, 0.5, 0.0]])
    assert math.isclose(hypervolume(g, torch.ones(3)), 0.625)
    assert hypervolume(torch.tensor([[2.0, 0.0]]), torch.ones(2)) == 0.0
