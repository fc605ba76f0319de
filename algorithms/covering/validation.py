"""Input checks shared by the covering modules: each names the argument and its allowed range."""

from __future__ import annotations

import math


def check_finite_positive(name: str, value: float) -> None:
    """`value` must be a finite number > 0 (a radius, a grid step, a smoothing scale)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def check_count(name: str, value: int) -> None:
    """`value` must be an integer >= 1 (n, restarts, steps, samples, evaluations)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
