"""E[X_(l)] by numerical integration: E[X_(l)] = x_min + int_{x_min}^inf P(Bin(n, S(x)) >= l) dx.

P(X_(l) > x) is the chance that at least l of n samples exceed x, i.e. the regularized incomplete
beta I_{S(x)}(l, n - l + 1), accurate for any n. The range is cut where S halves (x_k = isf(2^-k))
so every quadrature piece carries comparable probability whatever the tail; it stops where
n S(x) <= 1e-13. For l = 1 the remainder int_x^inf P(X_(1) > y) dy = n int_x^inf S (1 - O(n S)) is
added from the family's tail integral (it can dominate: heavy tails put most of E[max] there);
for l >= 2 the remainder is below (n S)^(l-1) n int_x^inf S, negligible at n S = 1e-13.
"""

from __future__ import annotations

import math

from scipy.integrate import quad
from scipy.special import betainc

from optiforge.algorithms.order_statistics.checks import check_rank
from optiforge.algorithms.order_statistics.families import TailFamily

TAIL_MASS = 1e-13  # n S(x) at the last quadrature point


def expected_order_statistic(family: TailFamily, n: int, rank: int) -> float:
    """E[X_(l)], the l = `rank`-th largest of `n` i.i.d. draws of `family` (1: the maximum)."""
    check_rank(n, rank)
    pieces = math.ceil(math.log2(n / TAIL_MASS))
    edges = [float(family.isf(2.0**-k)) for k in range(pieces + 1)]
    edges[0] = family.x_min

    def exceed(x: float) -> float:
        return float(betainc(rank, n - rank + 1, float(family.survival(x))))

    total = family.x_min
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        # the integrand falls on [a, b]: (b - a) exceed(a) bounds the piece, so this is relative
        tolerance = 1e-10 * (b - a) * exceed(a)
        total += quad(exceed, a, b, limit=200, epsabs=tolerance, epsrel=1e-9)[0]
    if rank == 1:
        total += n * family.tail_integral(edges[-1])
    return total
