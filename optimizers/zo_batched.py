"""Many draws of a telescoping construction at once, as tensors (Ma & Huang 2025).

`zo_estimators.sample_terms` draws one estimate as a Python list of (offset, coefficient) pairs;
a Monte-Carlo study of 10^5-10^6 draws needs them as tensors. Every construction combines at most
the four points 0, mu_1, mu_N and mu_{N+1} along v, so a batch is two [M, 4] tensors over those
slots: P_i = sum_j coefficients[i, j] f(x + offsets[i, j] v_i). The groups and their scale
factors are those of `zo_estimators.groups` (tested row by row against it): P3 draws D_1 or the
telescoping term and scales it by 2, P2 one difference quotient by 3, P1 one function value by
4 (by 3 when N = 1, where mu_N = mu_1 leaves three distinct points).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from optiforge.optimizers.zo_estimators import CONSTRUCTIONS
from optiforge.optimizers.zo_schedules import Schedule


@dataclass(frozen=True)
class Draws:
    """M draws: N [M], offsets [M, 4] (0, mu_1, mu_N, mu_{N+1}) and coefficients [M, 4]; a zero
    coefficient marks a point the draw does not evaluate (when N = 1 the mu_N slot is merged
    into the mu_1 slot)."""

    n: torch.Tensor
    offsets: torch.Tensor
    coefficients: torch.Tensor

    def evaluations(self) -> torch.Tensor:
        """Function evaluations of each draw (points with a nonzero coefficient), [M]."""
        return (self.coefficients != 0).sum(1)


def draw(construction: str, schedule: Schedule, count: int, generator: torch.Generator) -> Draws:
    """`count` independent draws of (N, U) for `construction`, float64."""
    if construction not in CONSTRUCTIONS:
        raise ValueError(f"construction must be one of {list(CONSTRUCTIONS)}, got {construction!r}")
    n = schedule.sample_batch(count, generator)
    mu1 = torch.full((count,), schedule.mu1, dtype=torch.float64)
    mu_n, mu_next, p = schedule.mus(n), schedule.mus(n + 1), schedule.probs(n)
    zero = torch.zeros_like(mu1)
    offsets = torch.stack([zero, mu1, mu_n, mu_next], 1)
    first = torch.stack([-1 / mu1, 1 / mu1, zero, zero], 1)  # D_1
    upper = torch.stack([-1 / (p * mu_next), zero, zero, 1 / (p * mu_next)], 1)  # D_{N+1} / p_N
    lower = torch.stack([1 / (p * mu_n), zero, -1 / (p * mu_n), zero], 1)  # -D_N / p_N
    if construction == "P1":
        return Draws(n, offsets, _one_point(first + upper + lower, n, generator))
    options = {
        "P4": [first + upper + lower],
        "P3": [first, upper + lower],
        "P2": [first, upper, lower],
    }[construction]
    pick = torch.randint(len(options), (count,), generator=generator)
    chosen = torch.stack(options, 0)[pick, torch.arange(count)] * len(options)
    return Draws(n, offsets, _merge_first_slot(chosen, n))


def _merge_first_slot(coefficients: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """Where N = 1 (mu_N = mu_1), the mu_N slot's coefficient moved onto the mu_1 slot."""
    merged = coefficients.clone()
    single = n == 1
    merged[single, 1] += merged[single, 2]
    merged[single, 2] = 0.0
    return merged


def _one_point(total: torch.Tensor, n: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """P1: one of the distinct points of P4's combination, uniformly, times their number."""
    total = _merge_first_slot(total, n)
    points = torch.where(n == 1, 3, 4)
    pick = torch.floor(
        torch.rand(n.shape, generator=generator, dtype=torch.float64) * points
    ).long()
    slot = torch.where((n == 1) & (pick >= 2), pick + 1, pick)  # skip the merged mu_N slot
    rows = torch.arange(n.numel())
    chosen = torch.zeros_like(total)
    chosen[rows, slot] = total[rows, slot] * points
    return chosen
