"""Null, eps-far and mid-window instances for the replicable testers' experiments.

Every instance is a pair of distributions (p, q) on the tester's cells whose counts the experiment
draws as multinomials: for uniformity q is U_n, for closeness the two sampled distributions, for
independence the joint distribution and the product of its marginals (what the tester's paired
halves sample). "far" is at total variation eps; "mid" puts the expected statistic E[T] at 1/2,
the middle of the threshold window, where replicability is hardest: "mid" spreads the
perturbation over all cells, "spike" (uniformity) puts it on one heavy cell. "chi2-mid" is the
spread perturbation at which scipy's chi-square test (level 0.05) rejects half the time: its own
mid window, where the fixed-level test is least replicable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

ALPHA = 0.05  # the chi-square tests' level


@dataclass(frozen=True)
class Instance:
    """Distributions p (sampled) and q (U_n, the second sample, or the product of marginals)."""

    name: str
    p: NDArray[np.float64]
    q: NDArray[np.float64]


def alternating(n: int) -> NDArray[np.float64]:
    """+1, -1, +1, ... on n (even) cells: a perturbation sign that keeps the total mass."""
    return np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def two_level(n: int) -> NDArray[np.float64]:
    """A non-uniform base: cells in pairs (2k, 2k+1) of equal mass, every other pair 3x heavier."""
    weight = np.where((np.arange(n) // 2) % 2 == 0, 3.0, 1.0)
    return weight / weight.sum()


def expected_closeness(p: NDArray, q: NDArray, m: int, eps: float) -> float:
    """Poissonized E[T] of the closeness statistic: sum delta_i^2 (l_i - 1 + e^-l_i) / gap.

    l_i = m (p_i + q_i) and delta_i = (p_i - q_i) / (p_i + q_i): given S_i = s, the term's mean is
    (s - 1) delta_i^2 for s >= 1.
    """
    lam = m * (p + q)
    delta = np.divide(p - q, p + q, out=np.zeros_like(p), where=p + q > 0)
    n = p.size
    return float(np.sum(delta**2 * (lam - 1 + np.exp(-lam)))) / (2 * m**2 * eps**2 / (n + m))


def mid_scale(p: NDArray, sign: NDArray, m: int, eps: float) -> float:
    """The scale a <= 2 eps with E[T] = 1/2 between p (1 + a sign) and p."""
    return brentq(lambda a: expected_closeness(p * (1 + a * sign), p, m, eps) - 0.5, 0.0, 2 * eps)


def chi_square_scale(noncentrality: float, df: int) -> float:
    """The scale a with power 1/2 when the chi-square noncentrality is a^2 `noncentrality`."""
    critical = chi2.isf(ALPHA, df)
    target = brentq(lambda lam: ncx2.sf(critical, df, lam) - 0.5, 1e-9, 100.0 * df + 100.0)
    return float(np.sqrt(target / noncentrality))


def spike(n: int, d: float) -> NDArray[np.float64]:
    """U_n with mass d moved onto cell 0 from all the others."""
    p = np.full(n, 1.0 / n - d / (n - 1))
    p[0] = 1.0 / n + d
    return p


def uniformity_instances(n: int, eps: float, m: int) -> list[Instance]:
    """U_n; (1 +- 2 eps)/n (TV eps); (1 +- a)/n and U_n + d on one cell with E[T] = 1/2 at m;
    (1 +- a)/n at scipy's power 1/2 (noncentrality m a^2)."""
    uniform = np.full(n, 1.0 / n)
    sign = alternating(n)
    d = brentq(lambda d: expected_closeness(spike(n, d), uniform, m, eps) - 0.5, 0.0, 1 - 1 / n)
    return [
        Instance("null", uniform, uniform),
        Instance("far", uniform * (1 + 2 * eps * sign), uniform),
        Instance("mid", uniform * (1 + mid_scale(uniform, sign, m, eps) * sign), uniform),
        Instance("spike", spike(n, d), uniform),
        Instance("chi2-mid", uniform * (1 + chi_square_scale(m, n - 1) * sign), uniform),
    ]


def closeness_instances(n: int, eps: float, m: int) -> list[Instance]:
    """q two-level: p = q; p = q (1 +- 2 eps) (TV eps); p = q (1 +- a) with E[T] = 1/2 at m
    samples; and at scipy's power 1/2 (noncentrality m sum (p-q)^2/(p+q) ~ m a^2 / 2)."""
    p = two_level(n)
    sign = alternating(n)
    return [
        Instance("null", p, p),
        Instance("far", p * (1 + 2 * eps * sign), p),
        Instance("mid", p * (1 + mid_scale(p, sign, m, eps) * sign), p),
        Instance("chi2-mid", p * (1 + chi_square_scale(m / 2, n - 1) * sign), p),
    ]


def independence_instances(n1: int, n2: int, eps: float, m: int) -> list[Instance]:
    """Joint vs product of marginals: product; product (1 + 2 eps (-1)^(a+b)) (TV eps); mid.

    The checkerboard sign sums to zero over each pair of equal-mass cells, so the perturbed
    joint keeps both marginals and the product of its marginals is the unperturbed product.
    """
    product = np.outer(two_level(n1), two_level(n2)).ravel()
    sign = np.outer(alternating(n1), alternating(n2)).ravel()
    a = chi_square_scale(3 * m, (n1 - 1) * (n2 - 1))  # scipy tests all 3m joint samples
    return [
        Instance("null", product, product),
        Instance("far", product * (1 + 2 * eps * sign), product),
        Instance("mid", product * (1 + mid_scale(product, sign, m, eps) * sign), product),
        Instance("chi2-mid", product * (1 + a * sign), product),
    ]
