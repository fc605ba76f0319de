"""Argument checks of the replicable testers: bad input fails with one line naming the field."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray


def check_eps(eps: float) -> None:
    """The distance eps (total variation) lies in (0, 1]."""
    if not (isinstance(eps, int | float) and math.isfinite(eps) and 0 < eps <= 1):
        raise ValueError(f"eps: must lie in (0, 1], got {eps!r}")


def check_rho(rho: float) -> None:
    """The replicability parameter rho lies in (0, 1)."""
    if not (isinstance(rho, int | float) and math.isfinite(rho) and 0 < rho < 1):
        raise ValueError(f"rho: must lie in (0, 1), got {rho!r}")


def check_support(name: str, n: int) -> None:
    """A support size: an integer >= 2."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"{name}: must be an integer >= 2, got {n!r}")


def check_seed(seed: int) -> None:
    """The shared internal seed: an integer >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")


def check_threshold(threshold: float | None) -> None:
    """A fixed threshold, if given, is a finite number."""
    if threshold is not None and not (
        isinstance(threshold, int | float) and math.isfinite(threshold)
    ):
        raise ValueError(f"threshold: must be a finite number or None, got {threshold!r}")


def labels(name: str, samples: ArrayLike, n: int) -> NDArray[np.int64]:
    """`samples` as a 1-d integer array of labels in [0, n), else an error naming `name`."""
    array = np.asarray(samples)
    if array.ndim != 1:
        raise ValueError(f"{name}: must be a 1-d sequence of labels, got shape {array.shape}")
    whole = np.issubdtype(array.dtype, np.integer) or (
        np.issubdtype(array.dtype, np.floating) and np.all(array == np.round(array))
    )
    if array.size and not whole:
        raise ValueError(f"{name}: labels must be integers in [0, {n})")
    array = array.astype(np.int64)
    if array.size and (array.min() < 0 or array.max() >= n):
        bad = array[(array < 0) | (array >= n)][0]
        raise ValueError(f"{name}: labels must be integers in [0, {n}), found {bad}")
    return array


def enough(name: str, given: int, needed: int, setting: str) -> None:
    """At least the `needed` samples of the sample-size bound, else an error naming `name`."""
    if given < needed:
        raise ValueError(f"{name}: {given} given, the sample-size bound needs {needed} ({setting})")
