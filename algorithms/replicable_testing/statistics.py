"""The normalized test statistic T of the testers: E[T] <= 0 under the null, E[T] >= 1 at eps.

Distances are total variation, d(p, q) = sum |p_i - q_i| / 2, so eps-far means ||p - q||_1 >= 2 eps.
All three testers compare two count vectors with it: uniformity the sample against a uniform
sample drawn from the shared seed, closeness the two samples, independence the joint sample
against a sample of the product of its marginals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def closeness_statistic(x: NDArray[np.int64], y: NDArray[np.int64], eps: float) -> float:
    """Z = sum_i ((X_i - Y_i)^2 - X_i - Y_i) / (X_i + Y_i) over its gap 2 m^2 eps^2 / (n + m).

    Chan, Diakonikolas, Valiant and Valiant's statistic. Given S_i = X_i + Y_i, X_i is
    Binomial(S_i, 1/2) when p_i = q_i (Poissonized), so each term has mean 0 under the null
    (slightly negative with exactly m samples per side); at TV distance eps,
    E[Z] >= m^2 ||p - q||_1^2 / (2n + 2m) by Cauchy-Schwarz. Dividing by X_i + Y_i keeps a heavy
    cell's term linear in its count, so no single cell dominates the variance.
    """
    n = x.size
    m = int(x.sum())
    total = x + y
    seen = total > 0
    diff = (x - y)[seen].astype(float)
    z = float(np.sum((diff**2 - total[seen]) / total[seen]))
    return z / (2.0 * m**2 * eps**2 / (n + m))
