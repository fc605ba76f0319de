"""problems/qosd/edge_functions.py: edge weights, their inverse, numpy and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from optiforge.problems.qosd import EDGE_FUNCTIONS, edge_weights, perturbation_for_weight


@pytest.mark.parametrize("function", EDGE_FUNCTIONS)
def test_edge_functions_start_at_the_weight_and_invert_exactly(function: str) -> None:
    """Each edge function is alpha + beta at x = 0, inverts exactly, and agrees in torch."""
    alpha, beta = np.array([0.3, 1.0]), np.array([0.7, 2.0])
    assert np.allclose(edge_weights(function, alpha, beta, np.zeros(2)), alpha + beta)
    x = np.array([0.25, 3.0])
    weight = edge_weights(function, alpha, beta, x)
    assert np.allclose(perturbation_for_weight(function, alpha, beta, weight), x)
    assert np.all(perturbation_for_weight(function, alpha, beta, alpha) == 0)  # below f(0)
    torch_weight = edge_weights(function, torch.tensor(alpha), torch.tensor(beta), torch.tensor(x))
    assert np.allclose(torch_weight.numpy(), weight)


def test_quadratic_and_log_by_hand() -> None:
    """Quadratic and log edge weights equal their hand values."""
    assert edge_weights("quadratic", 1.0, 2.0, 1.0) == pytest.approx(1 + 2 * 4)
    assert edge_weights("log", 1.0, 2.0, np.e - 1) == pytest.approx(1 + 2 * 2)
