"""Bias benchmark pieces: analytic biases of the two-point estimators, the contrast test."""

from __future__ import annotations

import pytest
import torch

from optiforge.benchmarks.zeroth_order_bias import cell, contrasts, gradient, quadratic


def test_two_point_directional_biases_on_the_quadratic() -> None:
    """On x^T G x the forward difference along v is v.g + mu v^T G v, so its directional bias is
    mu E[v^T G v] = mu tr(G) (E[v v^T] = I on the sqrt(d) sphere); the central one is exact."""
    f, x = quadratic()
    grad = gradient(f, x)
    trace = float(f(torch.eye(x.numel(), dtype=torch.float64)).sum())  # sum_i e_i^T G e_i
    mu = 0.01
    forward = cell("two-point forward", f, x, grad, mu, 20000, seed=0)
    expected = mu * trace
    assert abs(forward["directional_bias"] - expected) < forward["directional_ci95"] * 2
    assert forward["directional_ci95"] < 0.1 * expected  # the check has teeth
    central = cell("central (MeZO)", f, x, grad, mu, 2000, seed=1)
    assert central["directional_bias"] == pytest.approx(0.0, abs=1e-9)
    assert forward["evals"] == central["evals"] == 2.0


def test_contrast_needs_the_two_intervals_apart() -> None:
    """Resolved iff |forward bias - estimator bias| exceeds the sum of the two half-widths."""
    forward = {"problem": "q", "mu": 1e-3, "estimator": "two-point forward",
               "directional_bias": 0.46, "directional_ci95": 0.01}  # fmt: skip
    wide = {**forward, "estimator": "P3 geometric", "directional_bias": 0.29,
            "directional_ci95": 0.74}  # fmt: skip
    narrow = {**wide, "estimator": "P3 zipf", "directional_ci95": 0.1}
    other = {**wide, "estimator": "P2 zipf", "directional_ci95": 0.0}
    found = contrasts([forward, wide, narrow, other])
    assert [(r["estimator"], r["resolved"]) for r in found] == [
        ("P3 geometric", False),
        ("P3 zipf", True),
    ]
