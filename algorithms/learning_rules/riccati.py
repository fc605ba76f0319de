"""Discrete-time Riccati recursions: finite-horizon LQR gains and stationary LQR / Kalman gains.

The learning-rule control problem (docs/learning_rules.md) is linear-quadratic: state x_t (the
parameters' offset from the optimum), control u_t (the update), x_{t+1} = A x_t + B u_t + w_t,
cost Σ_{t<N} (½ u_tᵀ R u_t + ½ x_{t+1}ᵀ Q x_{t+1}). Its optimal control is u_t = -K_t x_t (LQR)
applied to the Kalman estimate of x_t (LQG, by separation). Stationary solutions come from
`scipy.linalg.solve_discrete_are`; the finite-horizon recursion is our own and converges to it.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

Matrix = NDArray[np.float64]


def require_horizon(horizon: int) -> None:
    """Raise `ValueError` unless the planning horizon is an integer >= 1."""
    if not (isinstance(horizon, int) and horizon >= 1):
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")


def require_psd(field: str, matrix: Matrix, *, strict: bool = False) -> None:
    """Raise `ValueError` unless `matrix` is symmetric positive semi-definite (definite)."""
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{field} must be a square matrix, got shape {matrix.shape}")
    if not np.allclose(matrix, matrix.T):
        raise ValueError(f"{field} must be symmetric")
    low = float(np.linalg.eigvalsh(matrix).min())
    if low < (1e-12 if strict else -1e-12):
        kind = "positive definite" if strict else "positive semi-definite"
        raise ValueError(f"{field} must be {kind}, got smallest eigenvalue {low:.3g}")


def lqr_gain(b: Matrix, r: Matrix, p_next: Matrix, a: Matrix) -> Matrix:
    """K = (R + Bᵀ P B)⁻¹ Bᵀ P A: the optimal feedback when P is the next step's cost-to-go."""
    return np.linalg.solve(r + b.T @ p_next @ b, b.T @ p_next @ a)


def finite_horizon_lqr(
    a: Matrix, b: Matrix, q: Matrix, r: Matrix, horizon: int
) -> tuple[list[Matrix], list[Matrix]]:
    """Gains K_0..K_{N-1} and cost-to-go matrices P_0..P_N of the N-step problem.

    The cost counts the state after each update, so P_N = Q (terminal) and
    P_t = Q + Aᵀ P_{t+1} A - Aᵀ P_{t+1} B K_t for t >= 1; P_0 (no loss at the current state,
    which no update can change) omits the Q term.
    """
    require_horizon(horizon)
    require_psd("Q", q)
    require_psd("R", r)
    costs = [q]
    gains: list[Matrix] = []
    for step in range(horizon):
        p_next = costs[0]
        gain = lqr_gain(b, r, p_next, a)
        p = a.T @ p_next @ a - a.T @ p_next @ b @ gain
        p = 0.5 * (p + p.T) + (q if step < horizon - 1 else 0.0)
        gains.insert(0, gain)
        costs.insert(0, p)
    return gains, costs


def stationary_lqr(a: Matrix, b: Matrix, q: Matrix, r: Matrix) -> tuple[Matrix, Matrix]:
    """(K, P) of the infinite-horizon problem: P solves the DARE (scipy), K = lqr_gain(P)."""
    p = scipy.linalg.solve_discrete_are(a, b, q, r)
    return lqr_gain(b, r, p, a), p


def stationary_kalman(a: Matrix, c: Matrix, w: Matrix, v: Matrix) -> tuple[Matrix, Matrix]:
    """(L, Σ): steady-state filter gain L = Σ Cᵀ (C Σ Cᵀ + V)⁻¹ and prior covariance Σ for
    x_{t+1} = A x_t + w_t (cov W), y_t = C x_t + ε_t (cov V); Σ solves the dual DARE."""
    require_psd("W (drift covariance)", w)
    require_psd("V (gradient-noise covariance)", v, strict=True)
    sigma = scipy.linalg.solve_discrete_are(a.T, c.T, w, v)
    gain = np.linalg.solve(c @ sigma @ c.T + v, c @ sigma).T
    return gain, sigma
