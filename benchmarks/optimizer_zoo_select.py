"""The optimizer zoo's protocol as pure functions: the lr grid, the lr chosen on validation,
mean and spread over seeds, and ratios against the reference optimizer (AdamW)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from optiforge.optimizers.contract import LoopNeeds


def lr_grid(
    centre: float, factors: Sequence[float], bound: float = math.inf
) -> tuple[list[float], list[float]]:
    """`centre` times each factor, in the order given: the points <= `bound` (the largest lr
    the optimizer accepts) and the points left out above it."""
    points = [centre * factor for factor in factors]
    return [lr for lr in points if lr <= bound], [lr for lr in points if lr > bound]


def choose_lr(val_by_lr: Mapping[float, float], higher_is_better: bool) -> float | None:
    """The lr whose validation metric is best (a tie: the one listed first); a NaN or infinite
    metric (a diverged run) never wins; None when every run diverged."""
    finite = [(lr, value) for lr, value in val_by_lr.items() if math.isfinite(value)]
    if not finite:
        return None
    sign = 1.0 if higher_is_better else -1.0
    best = max(sign * value for _, value in finite)
    return next(lr for lr, value in finite if sign * value == best)


def mean_and_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation (the harness's `mean_std` convention); NaN for
    both if any value is not finite."""
    if not all(math.isfinite(v) for v in values):
        return math.nan, math.nan
    return statistics.fmean(values), statistics.pstdev(values)


def ratio(value: float, reference: float) -> float | None:
    """`value / reference`, None when the reference is not positive (nothing to compare to)."""
    return value / reference if reference > 0 else None


def needs_tags(needs: LoopNeeds) -> str:
    """What an optimizer asks of the loop, in a few words for the table (`-`: nothing)."""
    tags = [
        tag
        for tag, on in (
            ("closure", needs.closure and not needs.forward_only),
            ("forward-only", needs.forward_only),
            ("extra passes", needs.extra_passes and not needs.forward_only),
            ("sharpness pass", needs.sharpness_pass),
            ("second-order", needs.graph),
        )
        if on
    ]
    return ", ".join(tags) or "-"
