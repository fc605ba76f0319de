"""Monte Carlo of the top-l order statistics of n i.i.d. draws without drawing the n samples.

The k smallest of n uniforms are U_(k) = G_k / (G_l + R), k <= l, with G_k = E_1 + ... + E_k a
sum of standard exponentials and R ~ Gamma(n + 1 - l) independent (exponential spacings), so the
k-th largest sample is X_(k) = isf(U_(k)). One trial costs l + 1 draws and memory O(trials l),
exactly in distribution for any n (10^7 and beyond); trials run in chunks to bound memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from optiforge.algorithms.order_statistics.checks import check_rank
from optiforge.algorithms.order_statistics.families import TailFamily

CHUNK = 1 << 18  # trials per chunk: 2^18 x l float64 arrays, a few MB each


def sample_top(
    family: TailFamily, n: int, rank: int, trials: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Shape (trials, rank): row t holds X_(1) >= ... >= X_(l), l = `rank`, of one n-sample draw."""
    check_rank(n, rank)
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials: must be an integer >= 1, got {trials!r}")
    gaps = np.cumsum(rng.standard_exponential((trials, rank)), axis=1)
    rest = rng.standard_gamma(n + 1 - rank, size=trials)  # E_{l+1} + ... + E_{n+1}
    return family.isf(gaps / (gaps[:, -1] + rest)[:, None])


@dataclass(frozen=True)
class TopSummary:
    """Mean and standard error of each X_(k), k <= l, and quantiles of X_(1) / X_(2)."""

    mean: NDArray[np.float64]
    stderr: NDArray[np.float64]
    ratio_quantiles: dict[float, float]
    ratio_mean: float


def summarize_top(
    family: TailFamily,
    n: int,
    rank: int,
    trials: int,
    seed: int,
    quantiles: tuple[float, ...] = (0.5, 0.9, 0.99),
) -> TopSummary:
    """Moments of the top-`rank` order statistics over `trials` draws, run in bounded-memory chunks.

    The ratio X_(1) / X_(2) needs rank >= 2; with rank 1 its fields are empty / NaN.
    """
    check_rank(n, rank)
    rng = np.random.default_rng(seed)
    total = np.zeros(rank)
    square = np.zeros(rank)
    ratios = []
    done = 0
    while done < trials:
        size = min(CHUNK, trials - done)
        top = sample_top(family, n, rank, size, rng)
        total += top.sum(axis=0)
        square += (top**2).sum(axis=0)
        if rank >= 2:
            ratios.append(top[:, 0] / top[:, 1])
        done += size
    mean = total / trials
    variance = np.maximum(square / trials - mean**2, 0.0) * trials / max(trials - 1, 1)
    ratio = np.concatenate(ratios) if ratios else np.empty(0)
    return TopSummary(
        mean=mean,
        stderr=np.sqrt(variance / trials),
        ratio_quantiles={q: float(np.quantile(ratio, q)) for q in quantiles} if rank >= 2 else {},
        ratio_mean=float(ratio.mean()) if rank >= 2 else float("nan"),
    )
