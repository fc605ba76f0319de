"""Replicable testers: determinism, replicability at the documented rate, accuracy, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.replicable_testing import (
    FIXED_THRESHOLD,
    closeness_samples,
    closeness_statistic,
    closeness_test,
    draw_threshold,
    draw_uniform_reference,
    independence_samples,
    independence_test,
    uniformity_samples,
    uniformity_test,
)
from optiforge.benchmarks.replicable_testing_instances import (
    closeness_instances,
    independence_instances,
    uniformity_instances,
)

N, EPS, RHO = 100, 0.5, 0.2


def draw(p: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """m labels drawn from p."""
    return rng.choice(p.size, size=m, p=p)


def test_sample_sizes_follow_the_documented_formulas() -> None:
    """m = ceil(sqrt(40) sqrt(n)/(eps^2 rho) + 40/(eps^2 rho^2)) (+ n^(2/3) term; x3 for pairs)."""
    assert uniformity_samples(100, 0.5, 0.2) == math.ceil(
        math.sqrt(40) * 10 / 0.05 + 40 / (0.25 * 0.04)
    )
    closeness = 32 ** (1 / 3) * 100 ** (2 / 3) * 0.5 ** (-4 / 3) * 0.2 ** (-2 / 3)
    assert closeness_samples(100, 0.5, 0.2) == math.ceil(
        closeness + math.sqrt(40) * 10 / 0.05 + 40 / (0.25 * 0.04)
    )
    assert independence_samples(10, 10, 0.5, 0.2) == 3 * closeness_samples(100, 0.5, 0.2)


@given(
    st.integers(2, 10**6),
    st.floats(0.01, 1.0),
    st.floats(0.01, 0.99),
    st.floats(1.01, 3.0),
)
def test_sample_sizes_grow_with_n_and_shrink_with_eps_and_rho(
    n: int, eps: float, rho: float, factor: float
) -> None:
    """More cells, a smaller distance or a smaller rho never need fewer samples."""
    for size in (uniformity_samples, closeness_samples):
        m = size(n, eps, rho)
        assert size(math.ceil(n * factor), eps, rho) >= m
        assert size(n, eps / factor, rho) > m
        assert size(n, eps, rho / factor) > m


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 2**31))
def test_same_seed_and_samples_give_the_same_decision(seed: int, data_seed: int) -> None:
    """Rerunning a tester with the same seed on the same samples repeats its decision exactly."""
    rng = np.random.default_rng(data_seed)
    p = rng.dirichlet(np.ones(N))
    x = draw(p, closeness_samples(N, EPS, RHO), rng)
    y = draw(p, x.size, rng)
    assert uniformity_test(x, N, EPS, RHO, seed) == uniformity_test(x.copy(), N, EPS, RHO, seed)
    assert closeness_test(x, y, N, EPS, RHO, seed) == closeness_test(x, y, N, EPS, RHO, seed)
    pairs = np.stack([x % 10, y % 10], axis=1)
    pairs = np.concatenate([pairs] * 4)
    first = independence_test(pairs, 10, 10, EPS, RHO, seed)
    assert first == independence_test(pairs, 10, 10, EPS, RHO, seed)


def test_threshold_is_shared_randomness_in_the_window() -> None:
    """The threshold is a function of the seed, in [1/4, 3/4], spread over the window."""
    thresholds = np.array([draw_threshold(seed) for seed in range(2000)])
    assert draw_threshold(5) == draw_threshold(5)
    assert thresholds.min() >= 0.25 and thresholds.max() <= 0.75
    assert abs(thresholds.mean() - 0.5) < 0.01
    assert np.array_equal(draw_uniform_reference(5, 300, 7), draw_uniform_reference(5, 300, 7))


def test_uniformity_decision_is_the_statistic_against_the_seeded_threshold() -> None:
    """The decision is the closeness statistic vs the seed's uniform reference and threshold."""
    rng = np.random.default_rng(0)
    x = draw(np.full(N, 1 / N), uniformity_samples(N, EPS, RHO) + 17, rng)
    decision = uniformity_test(x, N, EPS, RHO, seed=11)
    statistic = closeness_statistic(
        np.bincount(x, minlength=N), draw_uniform_reference(11, x.size, N), EPS
    )
    assert decision.statistic == statistic
    assert decision.threshold == draw_threshold(11)
    assert decision.reject == (statistic > draw_threshold(11))
    assert decision.samples_used == x.size


@pytest.mark.parametrize("kind", ["uniformity", "closeness", "independence"])
def test_runs_sharing_a_seed_agree_at_the_documented_rate(kind: str) -> None:
    """Mid-window instance: 150 seeded pairs agree >= 1 - rho; with r = 1/2, unshared, ~half do."""
    rng = np.random.default_rng(1)
    if kind == "uniformity":
        m = uniformity_samples(N, EPS, RHO)
        instance = uniformity_instances(N, EPS, m)[2]
    elif kind == "closeness":
        m = closeness_samples(N, EPS, RHO)
        instance = closeness_instances(N, EPS, m)[2]
    else:
        m = independence_samples(10, 10, EPS, RHO) // 3
        instance = independence_instances(10, 10, EPS, m)[2]

    def decide(seed: int, threshold: float | None) -> bool:
        x = draw(instance.p, m, rng)
        if kind == "uniformity":
            return uniformity_test(x, N, EPS, RHO, seed, threshold).reject
        if kind == "closeness":
            return closeness_test(x, draw(instance.q, m, rng), N, EPS, RHO, seed, threshold).reject
        joint = np.stack(np.divmod(x, 10), axis=1)  # cells a * n2 + b back to (a, b)
        halves = np.stack(np.divmod(draw(instance.q, m, rng), 10), axis=1)
        # rows m..2m give a, rows 2m..3m give b of the product sample: both from `halves`
        pairs = np.concatenate([joint, halves, halves])
        return independence_test(pairs, 10, 10, EPS, RHO, seed, threshold).reject

    pairs = 150
    agree = sum(decide(seed, None) == decide(seed, None) for seed in range(pairs))
    unshared = 10**6  # the usual tester shares nothing between its runs
    fixed = sum(
        decide(seed, FIXED_THRESHOLD) == decide(seed + unshared, FIXED_THRESHOLD)
        for seed in range(pairs)
    )
    assert agree / pairs >= 1 - RHO
    assert fixed / pairs < 0.7


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_on_exact_null_and_far_distributions(seed: int) -> None:
    """Exactly uniform / equal / product distributions are accepted, TV-eps-far ones rejected."""
    rng = np.random.default_rng(seed)
    uniform = uniformity_instances(N, EPS, uniformity_samples(N, EPS, RHO))
    m = uniformity_samples(N, EPS, RHO)
    assert uniformity_test(draw(uniform[0].p, m, rng), N, EPS, RHO, seed).accept
    assert uniformity_test(draw(uniform[1].p, m, rng), N, EPS, RHO, seed).reject
    m = closeness_samples(N, EPS, RHO)
    null, far = closeness_instances(N, EPS, m)[:2]
    assert closeness_test(draw(null.p, m, rng), draw(null.q, m, rng), N, EPS, RHO, seed).accept
    assert closeness_test(draw(far.p, m, rng), draw(far.q, m, rng), N, EPS, RHO, seed).reject
    m = independence_samples(10, 10, EPS, RHO)
    null, far = independence_instances(10, 10, EPS, m // 3)[:2]
    for instance, reject in ((null, False), (far, True)):
        pairs = np.stack(np.divmod(draw(instance.p, m, rng), 10), axis=1)
        assert independence_test(pairs, 10, 10, EPS, RHO, seed).reject == reject


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda x: uniformity_test(x, N, 0.0, RHO, 0), "eps"),
        (lambda x: uniformity_test(x, N, 1.5, RHO, 0), "eps"),
        (lambda x: uniformity_test(x, N, EPS, 0.0, 0), "rho"),
        (lambda x: uniformity_test(x, N, EPS, 1.0, 0), "rho"),
        (lambda x: uniformity_test(x, 1, EPS, RHO, 0), "n"),
        (lambda x: uniformity_test(x, N, EPS, RHO, -1), "seed"),
        (lambda x: uniformity_test(x, N, EPS, RHO, 0, threshold=float("nan")), "threshold"),
        (lambda x: uniformity_test(x[:100], N, EPS, RHO, 0), "samples"),
        (lambda x: uniformity_test(x + 1, N, EPS, RHO, 0), "samples"),
        (lambda x: uniformity_test(x + 0.5, N, EPS, RHO, 0), "samples"),
        (lambda x: closeness_test(x, x[:10], N, EPS, RHO, 0), "other"),
        (lambda x: independence_test(x, 10, 10, EPS, RHO, 0), "pairs"),
        (lambda x: independence_test(np.zeros((9, 2), int), 10, 1, EPS, RHO, 0), "n2"),
        (lambda x: closeness_samples(N, 2.0, RHO), "eps"),
    ],
)
def test_bad_input_fails_by_name(call: object, field: str) -> None:
    """Out-of-range eps, rho, n, seed, threshold, too few or bad samples raise naming the field."""
    x = np.full(closeness_samples(N, EPS, RHO), N - 1)
    with pytest.raises(ValueError, match=rf"^{field}: "):
        call(x)  # type: ignore[operator]
