"""Argument checks shared by the order-statistics tools: bad input fails naming the field."""

from __future__ import annotations

import math


def check_rank(n: int, rank: int) -> None:
    """`n` >= 1 samples and a rank 1 <= l <= `n` (the l of X_(l); l = 1 is the maximum)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: must be an integer >= 1, got {n!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= n:
        raise ValueError(f"rank: l must be an integer in [1, n] = [1, {n}], got {rank!r}")


def check_positive(name: str, value: float) -> None:
    """A finite number > 0, else an error naming `name`."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
