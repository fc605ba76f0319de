"""Learning rules as optimal control: Riccati vs scipy, GD / natural gradient / momentum / Adam."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import scipy.linalg

from optiforge.algorithms.learning_rules import (
    finite_horizon_lqr,
    infer_curvature,
    lqg_momentum,
    one_step_preconditioner,
    optimal_linear_rule,
    simulate_lqg,
    stationary_kalman,
    stationary_lqr,
)
from optiforge.algorithms.learning_rules.horizon_search import accumulated_loss
from optiforge.algorithms.learning_rules.one_step import optimal_gd_step

H = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
EYE = np.eye(3)


def test_long_finite_horizon_equals_scipy_dare() -> None:
    """The finite-horizon recursion's first gain and cost-to-go converge to scipy's DARE."""
    a = np.array([[1.0, 0.1], [0.0, 0.9]])
    b = np.array([[0.0], [1.0]])
    q, r = np.diag([2.0, 0.5]), np.array([[0.3]])
    gains, costs = finite_horizon_lqr(a, b, q, r, 400)
    k, p = stationary_lqr(a, b, q, r)
    np.testing.assert_allclose(costs[1], scipy.linalg.solve_discrete_are(a, b, q, r), rtol=1e-9)
    np.testing.assert_allclose(costs[1], p, rtol=1e-9)
    np.testing.assert_allclose(gains[0], k, rtol=1e-9)


def test_kalman_covariance_solves_filter_riccati() -> None:
    """The steady-state prior covariance satisfies the filter Riccati equation."""
    a, c = np.array([[1.0, 0.2], [0.0, 1.0]]), np.array([[1.0, 0.0]])
    w, v = np.diag([0.01, 0.02]), np.array([[0.5]])
    gain, sigma = stationary_kalman(a, c, w, v)
    posterior = sigma - gain @ c @ sigma
    np.testing.assert_allclose(a @ posterior @ a.T + w, sigma, rtol=1e-9)


def test_one_step_is_gd_with_optimal_step_on_isotropic_quadratic() -> None:
    """Horizon 1, no control cost, H = h I: u = -g / h, the exact line-search GD step."""
    h = 2.5
    m = one_step_preconditioner(h * EYE, EYE, np.inf)
    g = h * np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(m, EYE / h, rtol=1e-12)
    assert optimal_gd_step(h * EYE, g) == pytest.approx(1 / h)


def test_one_step_with_control_cost_is_gd_with_shrunk_step() -> None:
    """Horizon 1, R = I/η, H = h I: GD with step 1/(h + 1/η)."""
    m = one_step_preconditioner(2.0 * EYE, EYE, 0.25)
    np.testing.assert_allclose(m, EYE / (2.0 + 4.0), rtol=1e-12)


def test_one_step_rule_is_newton_then_natural_gradient_as_eta_vanishes() -> None:
    """No control cost: Newton (H⁻¹); cheap-moves limit η → 0: M / η → G⁻¹ (natural gradient)."""
    metric = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(one_step_preconditioner(H, metric, np.inf), np.linalg.inv(H))
    for eta in (1e-2, 1e-4):
        m = one_step_preconditioner(H, metric, eta) / eta
        gap = np.linalg.norm(m - np.linalg.inv(metric)) / np.linalg.norm(np.linalg.inv(metric))
        assert gap < 5 * eta


def test_horizon_one_linear_rule_is_gd_with_optimal_step() -> None:
    """Unknown eigenbasis, N = 1: α = Σλ²/Σλ³ (the line-search step for x_0 = 1), β = 0."""
    eig = np.linalg.eigvalsh(H)
    alpha, beta = optimal_linear_rule(eig, 1)
    g = eig * np.ones(3)
    assert alpha == pytest.approx(optimal_gd_step(np.diag(eig), g))
    assert beta == 0.0


def test_longer_horizon_linear_rule_has_growing_momentum() -> None:
    """β* grows with N and beats the best GD step over the same horizon."""
    eig = np.geomspace(0.01, 1.0, 20)
    betas = [optimal_linear_rule(eig, n)[1] for n in (2, 10, 50)]
    assert 0 < betas[0] < betas[1] < betas[2]
    alpha, beta = optimal_linear_rule(eig, 50)
    gd = min(accumulated_loss(a, 0.0, eig, 50) for a in np.linspace(0.5, 2.0, 151))
    assert accumulated_loss(alpha, beta, eig, 50) < gd


def test_lqg_controller_is_heavy_ball_with_closed_form_coefficients() -> None:
    """The simulated long-horizon LQG updates obey u_t = β u_{t-1} - α y_t (closed form)."""
    rule = lqg_momentum(1.0, 0.5, 0.01, 0.1, 50)
    u, y = simulate_lqg(1.0, 0.5, 0.01, 0.1, 50, steps=200)
    fitted, *_ = np.linalg.lstsq(np.stack([u[:-1], -y[1:]], axis=1), u[1:], rcond=None)
    np.testing.assert_allclose(fitted, [rule.beta, rule.lr], rtol=1e-8)
    assert rule.beta > 0


def test_lqg_without_control_cost_is_gradient_descent() -> None:
    """r = 0: k = 1 at every horizon, so β = 0 and the rule is GD with the Kalman step ℓ."""
    rule = lqg_momentum(2.0, 0.0, 0.01, 0.1, 7)
    assert rule.beta == pytest.approx(0.0, abs=1e-12)
    assert rule.lr == pytest.approx(rule.kalman)


def test_bayes_curvature_recovers_curvature_and_matches_adam() -> None:
    """E[h] converges to the true per-coordinate h and to Adam's √v̂ / s."""
    rng = np.random.default_rng(0)
    h, s = np.geomspace(0.01, 100, 5), 0.5
    belief = infer_curvature(h * s * rng.standard_normal((4000, 5)), s, beta2=0.995)
    np.testing.assert_allclose(belief.mean_curvature[-1], h, rtol=0.2)
    np.testing.assert_allclose(belief.mean_curvature[-1], belief.adam_curvature[-1], rtol=0.02)
    assert np.isinf(belief.mean_curvature[0]).all()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: finite_horizon_lqr(EYE, EYE, H, EYE, 0), "horizon"),
        (lambda: optimal_linear_rule(np.ones(3), 0), "horizon"),
        (lambda: lqg_momentum(1.0, 0.5, -0.1, 0.1, 3), "drift"),
        (lambda: lqg_momentum(1.0, 0.5, 0.1, -0.1, 3), "noise"),
        (lambda: lqg_momentum(1.0, -0.5, 0.1, 0.1, 3), "control_cost"),
        (lambda: lqg_momentum(0.0, 0.5, 0.1, 0.1, 3), "curvature"),
        (lambda: one_step_preconditioner(H, EYE, 0.0), "eta"),
        (lambda: one_step_preconditioner(-H, EYE, 1.0), "hessian"),
        (lambda: infer_curvature(np.ones((2, 2)), 1.0, beta2=1.0), "beta2"),
        (lambda: infer_curvature(np.ones((2, 2)), 0.0), "scale"),
    ],
)
def test_bad_input_names_the_field(call: Callable[[], object], field: str) -> None:
    """Out-of-range arguments raise ValueError naming the field."""
    with pytest.raises(ValueError, match=f"^{field}"):
        call()
