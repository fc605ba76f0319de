"""The conditional-variance estimate against analytic values, and its input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optiforge.algorithms.generalization import estimate_generalization


def mean_estimator_losses(
    retrainings: int, m: int, sigma: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Training and population squared loss of the sample mean of m draws of N(0, sigma^2)."""
    samples = np.random.default_rng(seed).normal(0.0, sigma, size=(retrainings, m))
    means = samples.mean(axis=1)
    train = ((samples - means[:, None]) ** 2).mean(axis=1)  # L_S(mean) = biased variance
    test = means**2 + sigma**2  # L_D(theta) = (theta - mu)^2 + sigma^2
    return train, test


def test_mean_estimator_converges_to_the_analytic_conditional_variance() -> None:
    """Sample mean under squared loss: the sample mean is independent of the sample variance,
    so Var(L_D | L_S) = Var((mean - mu)^2) = 2 sigma^4 / m^2 and the gap is 2 sigma^2 / m."""
    m, sigma, delta = 10, 1.5, 0.1
    train, test = mean_estimator_losses(40_000, m, sigma, seed=0)
    estimate = estimate_generalization(train, test, delta)
    analytic = 2 * sigma**4 / m**2
    assert estimate.conditional_variance == pytest.approx(analytic, rel=0.03)
    assert estimate.gap == pytest.approx(2 * sigma**2 / m, rel=0.03)
    assert estimate.slope == pytest.approx(0.0, abs=0.02)
    assert estimate.bound == pytest.approx(math.sqrt(analytic / delta), rel=0.02)


def test_estimate_error_shrinks_with_more_retrainings() -> None:
    """Over 200 seeds, the mean absolute error of the estimate at K = 400 is about a third of
    that at K = 40 (the standard error falls like 1 / sqrt(K))."""
    m, sigma = 5, 1.0
    analytic = 2 * sigma**4 / m**2
    errors = {}
    for retrainings in (40, 400):
        estimates = [
            estimate_generalization(*mean_estimator_losses(retrainings, m, sigma, seed))
            for seed in range(200)
        ]
        errors[retrainings] = np.mean([abs(e.conditional_variance - analytic) for e in estimates])
    assert 0.2 < errors[400] / errors[40] < 0.45


def test_linear_dependence_on_the_training_loss_is_explained_away() -> None:
    """L = 0.1 + 0.5 T + noise of variance 1e-4: the fit recovers the line and V = 1e-4, far
    below the unconditional variance."""
    rng = np.random.default_rng(1)
    train = rng.uniform(0.0, 0.4, size=5000)
    test = 0.1 + 0.5 * train + rng.normal(0.0, 0.01, size=5000)
    estimate = estimate_generalization(train, test, delta=0.05)
    assert estimate.slope == pytest.approx(0.5, abs=0.01)
    assert estimate.intercept == pytest.approx(0.1, abs=0.005)
    assert estimate.conditional_variance == pytest.approx(1e-4, rel=0.05)
    assert estimate.variance > 30 * estimate.conditional_variance


def test_constant_training_loss_leaves_the_whole_variance() -> None:
    """An interpolating algorithm (training loss always 0): V is the sample variance of L."""
    test = np.array([0.02, 0.21, 0.03, 0.16, 0.11])
    estimate = estimate_generalization(np.zeros(5), test, delta=0.1)
    assert estimate.conditional_variance == pytest.approx(test.var(ddof=1))
    assert estimate.slope == 0.0
    assert estimate.gap == pytest.approx(test.mean())
    assert estimate.bound == pytest.approx(estimate.uninformed_bound)


@pytest.mark.parametrize(
    ("train", "test", "delta", "message"),
    [
        ([0.1, 0.2], [0.3, 0.4], 0.1, "retrainings"),
        ([0.1, 0.2, 0.3], [0.3, 0.4], 0.1, "one length"),
        ([0.1, 0.2, 0.3], [0.3, 0.4, 0.5], 1.0, "delta"),
        ([0.1, float("nan"), 0.3], [0.3, 0.4, 0.5], 0.1, "finite"),
    ],
)
def test_bad_inputs_name_the_field(
    train: list[float], test: list[float], delta: float, message: str
) -> None:
    """Too few retrainings for the fit, unequal lengths, delta outside (0, 1), NaN: named."""
    with pytest.raises(ValueError, match=message):
        estimate_generalization(train, test, delta)
