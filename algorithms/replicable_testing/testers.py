"""Replicable testers of uniformity, closeness and independence: samples in, a decision out.

Each tester counts its samples, computes a normalized statistic T (statistics.py) and rejects the
null when T exceeds a threshold drawn from the shared seed (shared_randomness.py). Two runs with
the same seed on fresh samples of the same distributions agree with probability >= 1 - rho when
they get at least the bound's samples (sample_size.py); fewer samples fail by name. Passing
`threshold` fixes r instead (the usual, non-replicable tester).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optiforge.algorithms.replicable_testing.checks import (
    check_eps,
    check_rho,
    check_seed,
    check_support,
    check_threshold,
    enough,
    labels,
)
from optiforge.algorithms.replicable_testing.sample_size import (
    closeness_samples,
    independence_samples,
    uniformity_samples,
)
from optiforge.algorithms.replicable_testing.shared_randomness import (
    draw_threshold,
    draw_uniform_reference,
)
from optiforge.algorithms.replicable_testing.statistics import closeness_statistic


@dataclass(frozen=True)
class Decision:
    """A tester's outcome: reject the null or not, with the statistic and threshold behind it."""

    reject: bool
    statistic: float
    threshold: float
    samples_used: int
    samples_required: int

    @property
    def accept(self) -> bool:
        return not self.reject

    def __str__(self) -> str:
        verdict = "reject" if self.reject else "accept"
        sign = ">" if self.reject else "<="
        return (
            f"{verdict} (statistic {self.statistic:.4g} {sign} threshold {self.threshold:.4g}; "
            f"{self.samples_used} samples used, bound {self.samples_required})"
        )


def _decide(
    statistic: float, seed: int, threshold: float | None, used: int, needed: int
) -> Decision:
    """Compare `statistic` with the fixed threshold or the one drawn from `seed`."""
    check_seed(seed)
    check_threshold(threshold)
    r = draw_threshold(seed) if threshold is None else float(threshold)
    return Decision(statistic > r, statistic, r, used, needed)


def uniformity_test(
    samples: ArrayLike,
    n: int,
    eps: float,
    rho: float,
    seed: int,
    threshold: float | None = None,
) -> Decision:
    """Is the distribution of `samples` (labels in [0, n)) uniform, or eps-far from it in TV?

    The samples are compared with as many draws from U_n taken from the shared seed, by the
    closeness statistic (robust to a single heavy cell, unlike the plain collision count).
    """
    check_support("n", n)
    needed = uniformity_samples(n, eps, rho)
    x = labels("samples", samples, n)
    enough("samples", x.size, needed, f"n={n}, eps={eps}, rho={rho}")
    check_seed(seed)
    reference = draw_uniform_reference(seed, x.size, n)
    statistic = closeness_statistic(np.bincount(x, minlength=n), reference, eps)
    return _decide(statistic, seed, threshold, x.size, needed)


def closeness_test(
    samples: ArrayLike,
    other: ArrayLike,
    n: int,
    eps: float,
    rho: float,
    seed: int,
    threshold: float | None = None,
) -> Decision:
    """Are `samples` and `other` (labels in [0, n)) from the same distribution, or eps-far ones?

    The first m = min(len(samples), len(other)) samples of each are used.
    """
    check_support("n", n)
    needed = closeness_samples(n, eps, rho)
    x = labels("samples", samples, n)
    y = labels("other", other, n)
    setting = f"n={n}, eps={eps}, rho={rho}"
    enough("samples", x.size, needed, setting)
    enough("other", y.size, needed, setting)
    m = min(x.size, y.size)
    counts = [np.bincount(z[:m], minlength=n) for z in (x, y)]
    return _decide(closeness_statistic(*counts, eps), seed, threshold, m, needed)


def independence_test(
    pairs: ArrayLike,
    n1: int,
    n2: int,
    eps: float,
    rho: float,
    seed: int,
    threshold: float | None = None,
) -> Decision:
    """Are the coordinates of `pairs` (shape (N, 2), labels in [0, n1) x [0, n2)) independent?

    With m = N // 3, the first m pairs are the joint sample; first coordinates of the next m
    paired with second coordinates of the last m are a sample of the product of the marginals;
    the closeness statistic on n1 n2 cells compares the two (eps-far from every product
    distribution implies eps-far from the product of the marginals).
    """
    check_support("n1", n1)
    check_support("n2", n2)
    check_eps(eps)
    check_rho(rho)
    needed = independence_samples(n1, n2, eps, rho)
    array = np.asarray(pairs)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"pairs: must have shape (N, 2), got {array.shape}")
    a = labels("pairs", array[:, 0], n1)
    b = labels("pairs", array[:, 1], n2)
    enough("pairs", a.size, needed, f"n1={n1}, n2={n2}, eps={eps}, rho={rho}")
    m = a.size // 3
    joint = np.bincount(a[:m] * n2 + b[:m], minlength=n1 * n2)
    product = np.bincount(a[m : 2 * m] * n2 + b[2 * m : 3 * m], minlength=n1 * n2)
    return _decide(closeness_statistic(joint, product, eps), seed, threshold, 3 * m, needed)
