"""The internal randomness both runs of a replicable tester share: the threshold, and for
uniformity a reference sample of the uniform distribution.

A tester rejects when its normalized statistic T exceeds a threshold r. With r fixed (the usual
tester, r = 1/2), two runs on fresh samples disagree whenever T lands near r, which happens with
constant probability on some distributions. Drawing r ~ U[1/4, 3/4] from a seed both runs use
makes them disagree only if r falls between their two values of T (Impagliazzo, Lei, Pitassi and
Sorrell's recipe), which the sample size makes rare (sample_size.py).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from optiforge.algorithms.replicable_testing.checks import check_seed

LOW, HIGH = 0.25, 0.75
FIXED_THRESHOLD = 0.5  # the non-replicable tester's threshold: the window's middle


def draw_threshold(seed: int) -> float:
    """The threshold r ~ U[LOW, HIGH] of the internal randomness `seed`."""
    check_seed(seed)
    return float(np.random.default_rng(seed).uniform(LOW, HIGH))


def draw_uniform_reference(seed: int, m: int, n: int) -> NDArray[np.int64]:
    """Counts of m draws from U_n, from a stream of `seed` independent of the threshold's."""
    check_seed(seed)
    return np.random.default_rng([seed, 1]).multinomial(m, np.full(n, 1.0 / n))
