"""Sample sizes m(n, eps, rho) of the replicable testers, in the shape of the paper's bounds.

Diakonikolas, Gao, Kane, Liu and Ye ("Replicable Distribution Testing") give, up to constants and
log factors: uniformity sqrt(n) eps^-2 rho^-1 + eps^-2 rho^-2 (Liu and Ye's tester, matched by
their lower bound); closeness n^(2/3) eps^(-4/3) rho^(-2/3) + sqrt(n) eps^-2 rho^-1 + eps^-2 rho^-2.

Our constants come from one requirement. The statistic T (statistics.py) has E[T] <= 0 under the
null and E[T] >= 1 at distance eps; both runs share a threshold r ~ U[1/4, 3/4] and disagree only
if r falls between T and T', with probability E|F(T) - F(T')| <= sqrt(2) sd(T) / (1/2) for the
threshold's distribution function F. So Var[T] <= rho^2 / 8 gives replicability 1 - rho. Half of
it goes to the null variance and half to the extra variance off the null, with Poissonized counts
and S_i = X_i + Y_i ~ Poisson(l_i), l_i = m (p_i + q_i), and the gap G = 2 m^2 eps^2 / (n + m):

- null: Var[Z] = sum E[2 (1 - 1/S_i); S_i >= 1] <= sum min(2, l_i^2 / 2), at most 2 min(n, m) for
  any p and 2 min(n, 2 m^2 / n) for the uniform one. Var[Z] / G^2 <= rho^2 / 16 then needs
  32^(1/3) n^(2/3) eps^(-4/3) rho^(-2/3) samples when m <= n (closeness only: with a uniform
  reference the bound is 2 n / (m^2 eps^4) for every m) and sqrt(32) sqrt(n) eps^-2 rho^-1.
- off the null the extra variance is at most 5 m sum (p_i - q_i)^2 / (p_i + q_i) (Chan,
  Diakonikolas, Valiant, Valiant), about 5 E[Z], worst where E[T] = 1/2 (mid window): 2.5 / G <=
  rho^2 / 16 needs 40 eps^-2 rho^-2 samples when m >= n, and sqrt(40) sqrt(n) eps^-1 rho^-1 when
  m <= n, covered by raising sqrt(32) to sqrt(40) (eps <= 1).

So uniformity m = sqrt(40) sqrt(n) eps^-2 rho^-1 + 40 eps^-2 rho^-2 and closeness adds
32^(1/3) n^(2/3) eps^(-4/3) rho^(-2/3) per sample. Independence on [n1] x [n2] takes three times
the closeness size on n1 n2 cells (the joint sample and two thirds paired into a sample of the
product of the marginals); the paper's first term n1^(2/3) n2^(1/3) is below our (n1 n2)^(2/3),
the other two terms are the same. The constants are conservative (Chebyshev-type): the measured
disagreement rates in docs/statistical_tools.md sit well below rho.
"""

from __future__ import annotations

import math

from optiforge.algorithms.replicable_testing.checks import check_eps, check_rho, check_support

UNIFORMITY = (math.sqrt(40.0), 40.0)
CLOSENESS = (32.0 ** (1.0 / 3.0), math.sqrt(40.0), 40.0)


def uniformity_samples(n: int, eps: float, rho: float) -> int:
    """Samples m for replicable uniformity testing on [n] at distance eps, replicability rho."""
    check_support("n", n)
    check_eps(eps)
    check_rho(rho)
    b, c = UNIFORMITY
    return math.ceil(b * math.sqrt(n) / (eps**2 * rho) + c / (eps**2 * rho**2))


def closeness_samples(n: int, eps: float, rho: float) -> int:
    """Samples m from each of p and q for replicable closeness testing on [n]."""
    check_support("n", n)
    check_eps(eps)
    check_rho(rho)
    a, b, c = CLOSENESS
    return math.ceil(
        a * n ** (2 / 3) * eps ** (-4 / 3) * rho ** (-2 / 3)
        + b * math.sqrt(n) / (eps**2 * rho)
        + c / (eps**2 * rho**2)
    )


def independence_samples(n1: int, n2: int, eps: float, rho: float) -> int:
    """Joint samples (a, b) for independence testing on [n1] x [n2]: three closeness sizes."""
    check_support("n1", n1)
    check_support("n2", n2)
    return 3 * closeness_samples(n1 * n2, eps, rho)
