"""Non-decreasing edge-weight functions f_e(x) = alpha_e + beta_e * g(x) of the QoSD problem.

Every family has g(0) = 1, so f_e(0) = alpha_e + beta_e is the unperturbed weight (this matches
the Gnutella08 data, whose `weight` column equals alpha + beta on every edge; upstream leaves the
exact nonlinear form open, the three shapes below are our choice):

- "linear":    g(x) = 1 + x               (f_e(x) = w_e + beta_e x, the LP-solvable case)
- "quadratic": g(x) = (1 + x)^2           (convex, increasingly cheap to stress)
- "log":       g(x) = 1 + log(1 + x)      (concave, diminishing returns: greedy's hard case)

Each g is strictly increasing on [0, inf) with a closed-form inverse, so "the least perturbation
that lifts an edge to weight y" is exact. Everything works on numpy arrays and torch tensors
(the torch path is differentiable, used by the learned phases).
"""

from __future__ import annotations

import numpy as np
import torch

EDGE_FUNCTIONS = ("linear", "quadratic", "log")


def check_edge_function(name: str) -> str:
    """`name` if it is a known edge-weight family, else a ValueError naming the allowed ones."""
    if name not in EDGE_FUNCTIONS:
        raise ValueError(f"edge_function must be one of {EDGE_FUNCTIONS}, got {name!r}")
    return name


def shape(name: str, x):
    """g(x) for numpy arrays or torch tensors."""
    lib = torch if isinstance(x, torch.Tensor) else np
    if name == "linear":
        return 1.0 + x
    if name == "quadratic":
        return (1.0 + x) ** 2
    if name == "log":
        return 1.0 + lib.log1p(x)
    raise ValueError(f"edge_function must be one of {EDGE_FUNCTIONS}, got {name!r}")


def inverse_shape(name: str, z: np.ndarray) -> np.ndarray:
    """g^{-1}(z) for z >= 1 (numpy): the perturbation at which g reaches z."""
    if name == "linear":
        return z - 1.0
    if name == "quadratic":
        return np.sqrt(z) - 1.0
    if name == "log":
        return np.expm1(z - 1.0)
    raise ValueError(f"edge_function must be one of {EDGE_FUNCTIONS}, got {name!r}")


def edge_weights(name: str, alpha, beta, x):
    """f_e(x_e) = alpha_e + beta_e g(x_e), elementwise (numpy or torch)."""
    return alpha + beta * shape(name, x)


def perturbation_for_weight(
    name: str, alpha: np.ndarray, beta: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """The least x >= 0 with f_e(x) >= weight (0 where the weight is already reached)."""
    z = np.maximum((weight - alpha) / beta, 1.0)
    return np.maximum(inverse_shape(name, z), 0.0)
