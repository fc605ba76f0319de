"""Pairs of runs of the replicable testers and their baselines on one instance, at counts level.

A pair is two runs on fresh samples of the same distributions. The replicable tester's runs share
their internal seed (the pair's index): one threshold r ~ U[1/4, 3/4] and, for uniformity, one
uniform reference sample. The fixed-threshold tester is the same statistic with r = 1/2 and
unshared randomness; scipy's chi-square tests (chisquare on the counts for uniformity,
chi2_contingency on the 2 x n table for closeness and on the n1 x n2 table of the 3m joint
samples for independence) reject at p < 0.05. Counts are drawn as multinomials, the distribution
of the counts the testers in optiforge.algorithms.replicable_testing build from their samples.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binomtest, chi2_contingency, chisquare

from optiforge.algorithms.replicable_testing import (
    FIXED_THRESHOLD,
    closeness_statistic,
    draw_threshold,
    draw_uniform_reference,
)
from optiforge.benchmarks.replicable_testing_instances import ALPHA, Instance

METHODS = ("replicable", "fixed", "scipy")


@dataclass(frozen=True)
class Setup:
    """A tester kind ('uniformity', 'closeness', 'independence') at m samples (per side)."""

    kind: str
    m: int
    eps: float
    shape: tuple[int, int] | None = None  # (n1, n2) for independence


def chi_square_rejects(setup: Setup, x: NDArray, y: NDArray) -> bool:
    """scipy's chi-square test of the same hypothesis at level ALPHA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if setup.kind == "uniformity":
            return bool(chisquare(x).pvalue < ALPHA)
        # closeness: the 2 x n table; independence: all 3m joint samples as an n1 x n2 table
        table = np.stack([x, y]) if setup.kind == "closeness" else x.reshape(setup.shape)
        table = table[:, table.sum(axis=0) > 0]
        table = table[table.sum(axis=1) > 0]
        return bool(chi2_contingency(table, correction=False).pvalue < ALPHA)


def run_pairs(
    setup: Setup,
    instance: Instance,
    pairs: int,
    seed: int,
    methods: tuple[str, ...] = METHODS,
) -> dict[str, NDArray]:
    """Decisions (True = reject) of each of `methods`, shape (pairs, 2)."""
    rng = np.random.default_rng(seed)
    decisions = {method: np.zeros((pairs, 2), dtype=bool) for method in methods}
    n = instance.p.size
    for pair in range(pairs):
        shared = seed * pairs + pair
        threshold = draw_threshold(shared)
        for run in range(2):
            x = rng.multinomial(setup.m, instance.p)
            if setup.kind == "uniformity":
                y = draw_uniform_reference(shared, setup.m, n)
            else:
                y = rng.multinomial(setup.m, instance.q)
            decisions["replicable"][pair, run] = closeness_statistic(x, y, setup.eps) > threshold
            if "fixed" in methods:
                unshared = rng.multinomial(setup.m, instance.q) if setup.kind == "uniformity" else y
                fixed = closeness_statistic(x, unshared, setup.eps)
                decisions["fixed"][pair, run] = fixed > FIXED_THRESHOLD
            if "scipy" in methods:
                if setup.kind == "independence":  # scipy tests the table of all 3m joint samples
                    x = x + rng.multinomial(2 * setup.m, instance.p)
                decisions["scipy"][pair, run] = chi_square_rejects(setup, x, y)
    return decisions


def summarize(decisions: NDArray, instance: str) -> dict[str, float]:
    """Agreement rate with its 95% Clopper-Pearson interval, rejection rate and accuracy."""
    agree = int(np.sum(decisions[:, 0] == decisions[:, 1]))
    interval = binomtest(agree, decisions.shape[0]).proportion_ci(0.95)
    reject = float(decisions.mean())
    accuracy = {"null": 1.0 - reject, "far": reject}.get(instance, float("nan"))
    return {
        "replicability": agree / decisions.shape[0],
        "ci_low": float(interval.low),
        "ci_high": float(interval.high),
        "reject_rate": reject,
        "accuracy": accuracy,
    }
