"""Input checks shared by the streaming recommenders: each names the field and its range."""

from __future__ import annotations

import numpy as np


def check_positive_int(name: str, value: int) -> None:
    """`value` must be an integer >= 1 (k, visits_bound, capacity, ...)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def check_items(probs: np.ndarray, topics: np.ndarray) -> None:
    """probs [n] in [0, 1] and topics a boolean [n, m] matrix with matching n."""
    if probs.ndim != 1 or not np.all((probs >= 0.0) & (probs <= 1.0)):
        bad = probs[~((probs >= 0.0) & (probs <= 1.0))][:1]
        raise ValueError(f"probs must be a 1-d array of probabilities in [0, 1], got {bad}")
    if topics.ndim != 2 or topics.dtype != np.bool_ or topics.shape[0] != probs.shape[0]:
        raise ValueError(
            f"topics must be a boolean [n, m] matrix with n = len(probs) = {probs.shape[0]}, "
            f"got dtype {topics.dtype} shape {topics.shape}"
        )
