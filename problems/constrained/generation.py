"""Seeded random draws shared by the families: objective, equalities and feasibility bounds.

Every family draws from numpy's generator on stream (seed, 0) in a fixed order (Q, p, A, then
the inequality data), so the same seed gives the same data bit for bit, and families of the same
recipe and seed share Q, p, A (the nonconvex QP is the convex QP's data with sine constraints).

Recipes (reference notes):
- "fsnet": Q = diag(U[0, 0.5]), p ~ U[-1, 1], A ~ U[-1, 1], box [-5, 5].
- "dc3": Q = diag(U[0, 1]), p ~ U[0, 1], A ~ N(0, 1), no box.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch
from torch import Tensor

Recipe = Literal["fsnet", "dc3"]
FAMILY_STREAM = 0
FSNET_BOX_BOUND = 5.0


def family_rng(seed: int) -> np.random.Generator:
    """Generator for a family's shared data (stream 0 of `seed`)."""
    return np.random.default_rng([seed, FAMILY_STREAM])


def as_tensor(array: np.ndarray) -> Tensor:
    """float64 CPU tensor of a numpy draw."""
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))


def objective_and_equalities(
    rng: np.random.Generator, recipe: Recipe, num_vars: int, num_eq: int
) -> dict[str, Tensor]:
    """Q, p, A and A_pinv for `recipe`, drawn in that order from `rng`."""
    if recipe == "fsnet":
        q = rng.uniform(0.0, 0.5, size=num_vars)
        p = rng.uniform(-1.0, 1.0, size=num_vars)
        A = rng.uniform(-1.0, 1.0, size=(num_eq, num_vars))
    elif recipe == "dc3":
        q = rng.uniform(0.0, 1.0, size=num_vars)
        p = rng.uniform(0.0, 1.0, size=num_vars)
        A = rng.standard_normal(size=(num_eq, num_vars))
    else:
        raise ValueError(f"recipe must be 'fsnet' or 'dc3', got {recipe!r}")
    A_tensor = as_tensor(A)
    return {
        "Q": torch.diag(as_tensor(q)),
        "p": as_tensor(p),
        "A": A_tensor,
        "A_pinv": torch.linalg.pinv(A_tensor),
    }


def box_bound(recipe: Recipe) -> float | None:
    """FSNet's variable box half-width, or None (DC3 has no box)."""
    return FSNET_BOX_BOUND if recipe == "fsnet" else None


def linear_bound(G: Tensor, A_pinv: Tensor) -> Tensor:
    """h = sum_k |(G A^+)_ik| [k]: max of G_i A^+ x over x in [-1, 1]^m, so G A^+ x <= h."""
    return (G @ A_pinv).abs().sum(dim=-1)


def box_norm_bound(num_eq: int) -> float:
    """max ||x||_2 over x in [-1, 1]^num_eq, used by the quadratic and cone bounds."""
    return math.sqrt(num_eq)
