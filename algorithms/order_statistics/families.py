"""Finite-mean distributions on [x_min, inf) given by their survival function S(x) = P(X > x).

Each family supplies what the exact integrator and the Monte Carlo need: S, its inverse
`isf(u)` (the x with S(x) = u, vectorized) and the tail integral int_x^inf S(y) dy, which closes
the integral of E[X_(1)] beyond the last quadrature point. `NearExtremal` is the tail
c / (x log x (log log x)^(1 + delta)) that (for small delta) comes within a (log log n)^delta
factor of the largest growth n / (log n log log n) of E[X_(l)], l >= 2 (Correa, Mallmann-Trenn
and Romero, "Tight Asymptotics of Extreme Order Statistics").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optiforge.algorithms.order_statistics.checks import check_positive


class TailFamily(Protocol):
    """A distribution on [x_min, inf) with finite mean, described by its survival function."""

    name: str
    x_min: float

    def survival(self, x: ArrayLike) -> NDArray[np.float64]: ...

    def isf(self, u: ArrayLike) -> NDArray[np.float64]: ...

    def tail_integral(self, x: float) -> float: ...


@dataclass(frozen=True)
class Exponential:
    """Exponential(rate): S(x) = exp(-rate x); light-tailed control with a closed form."""

    rate: float = 1.0
    x_min: float = 0.0

    def __post_init__(self) -> None:
        check_positive("rate", self.rate)

    @property
    def name(self) -> str:
        return f"exponential(rate={self.rate:g})"

    def survival(self, x: ArrayLike) -> NDArray[np.float64]:
        return np.exp(-self.rate * np.maximum(np.asarray(x, dtype=float), 0.0))

    def isf(self, u: ArrayLike) -> NDArray[np.float64]:
        return -np.log(np.asarray(u, dtype=float)) / self.rate

    def tail_integral(self, x: float) -> float:
        return math.exp(-self.rate * x) / self.rate


@dataclass(frozen=True)
class Pareto:
    """Pareto(alpha, scale): S(x) = (x / scale)^-alpha for x >= scale; finite mean iff alpha > 1."""

    alpha: float
    scale: float = 1.0

    def __post_init__(self) -> None:
        check_positive("scale", self.scale)
        if not (math.isfinite(self.alpha) and self.alpha > 1):
            raise ValueError(f"alpha: must be > 1 for a finite mean, got {self.alpha!r}")

    @property
    def name(self) -> str:
        return f"pareto(alpha={self.alpha:g})"

    @property
    def x_min(self) -> float:
        return self.scale

    def survival(self, x: ArrayLike) -> NDArray[np.float64]:
        ratio = np.maximum(np.asarray(x, dtype=float) / self.scale, 1.0)
        return ratio**-self.alpha

    def isf(self, u: ArrayLike) -> NDArray[np.float64]:
        return self.scale * np.asarray(u, dtype=float) ** (-1.0 / self.alpha)

    def tail_integral(self, x: float) -> float:
        return self.scale**self.alpha * x ** (1.0 - self.alpha) / (self.alpha - 1.0)


@dataclass(frozen=True)
class NearExtremal:
    """S(x) = c / (x log x (log log x)^(1 + delta)) for x >= e^e, with c = e^(e + 1) so S(e^e) = 1.

    The mean e^e + c / delta is finite for every delta > 0; the tail is as heavy as a finite mean
    allows up to the (log log x)^delta factor.
    """

    delta: float
    x_min: float = math.exp(math.e)

    def __post_init__(self) -> None:
        check_positive("delta", self.delta)

    @property
    def name(self) -> str:
        return f"near-extremal(delta={self.delta:g})"

    @property
    def c(self) -> float:
        return math.exp(math.e + 1.0)

    def survival(self, x: ArrayLike) -> NDArray[np.float64]:
        t = np.log(np.maximum(np.asarray(x, dtype=float), self.x_min))
        return np.exp(self._log_survival(t))

    def _log_survival(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """log S(e^t) for t = log x >= e."""
        return math.log(self.c) - t - np.log(t) - (1.0 + self.delta) * np.log(np.log(t))

    def isf(self, u: ArrayLike) -> NDArray[np.float64]:
        """Solve log S(e^t) = log u by Newton's method in t = log x.

        log S(e^t) is convex and decreasing in t and equals 0 at t = e, so Newton started at t = e
        climbs monotonically to the root without overshooting.
        """
        target = np.log(np.asarray(u, dtype=float))
        if np.any(target > 0) or np.any(np.isnan(target)):
            raise ValueError("u: must lie in (0, 1]")
        t = np.full_like(target, math.e)
        for _ in range(200):
            slope = -(1.0 + 1.0 / t + (1.0 + self.delta) / (t * np.log(t)))
            step = (self._log_survival(t) - target) / slope
            t = t - step
            if np.all(np.abs(step) <= 1e-14 * t):
                break
        return np.exp(t)

    def tail_integral(self, x: float) -> float:
        return self.c / (self.delta * math.log(math.log(x)) ** self.delta)
