"""Closed forms of E[X_(l)], the l-th largest of n i.i.d. samples, for checking the integrator.

Exponential(rate): X_(l) = sum_{k=l}^n E_k / (rate k) (Renyi's representation), so
E[X_(l)] = (H_n - H_{l-1}) / rate. Pareto(alpha, scale): X_(l) = scale U_(l)^(-1/alpha) with
U_(l) ~ Beta(l, n - l + 1), so E[X_(l)] = scale Gamma(n+1) Gamma(l - 1/alpha) /
(Gamma(l) Gamma(n + 1 - 1/alpha)), finite for l > 1/alpha.
"""

from __future__ import annotations

import math

from scipy.special import digamma, gammaln, poch

from optiforge.algorithms.order_statistics.checks import check_rank
from optiforge.algorithms.order_statistics.families import Exponential, Pareto


def exponential_expected(family: Exponential, n: int, rank: int) -> float:
    """E[X_(l)] of n Exponential(rate) samples: (H_n - H_{l-1}) / rate, via digamma for large n."""
    check_rank(n, rank)
    return float(digamma(float(n) + 1.0) - digamma(rank)) / family.rate


def pareto_expected(family: Pareto, n: int, rank: int) -> float:
    """E[X_(l)] of n Pareto(alpha, scale) samples from the Beta moment of U_(l).

    Gamma(n + 1) / Gamma(n + 1 - 1/alpha) is Pochhammer's symbol (n + 1 - 1/alpha)_(1/alpha):
    a difference of log-gammas would lose digits for large n (0.2% at n = 10^12).
    """
    check_rank(n, rank)
    a = 1.0 / family.alpha
    growth = poch(float(n) + 1.0 - a, a)
    return family.scale * growth * math.exp(gammaln(rank - a) - gammaln(rank))
