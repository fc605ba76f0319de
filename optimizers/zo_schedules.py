"""Step-size / probability schedules of the telescoping zeroth-order estimators (Ma & Huang 2025).

A schedule pairs perturbation step sizes mu_1 > mu_2 > ... -> 0 with a distribution p_n on
n = 1, 2, ... . Unbiasedness needs sum_n mu_n < inf (Prop. 2.1); the variance factor
rho = sum_n (mu_n - mu_{n+1})^2 / p_n is smallest (= mu_1^2) for the pairing
p_n = (mu_n - mu_{n+1}) / mu_1, i.e. mu_n = mu_1 * P(N >= n). Both schedules here use it.
"""

from __future__ import annotations

import math

import torch

from optiforge.optimizers.validation import require_in_range, require_positive


class Geometric:
    """p_n = (1 - c) c^(n-1), mu_n = mu_1 c^(n-1) (sum mu_n = mu_1 / (1 - c))."""

    def __init__(self, mu: float = 1e-3, ratio: float = 0.5) -> None:
        require_positive("mu", mu)
        require_in_range("ratio", ratio, 0.0, 1.0, low_open=True, high_open=True)
        self.mu1, self.ratio = mu, ratio

    def mu(self, n: int) -> float:
        """Step size mu_n."""
        return self.mu1 * self.ratio ** (n - 1)

    def prob(self, n: int) -> float:
        """P(N = n)."""
        return (1.0 - self.ratio) * self.ratio ** (n - 1)

    def sample(self, generator: torch.Generator) -> int:
        """One N by inversion: N = 1 + floor(log U / log c), U uniform on (0, 1]."""
        u = 1.0 - torch.rand((), generator=generator, dtype=torch.float64).item()
        return 1 + math.floor(math.log(u) / math.log(self.ratio))

    def mus(self, n: torch.Tensor) -> torch.Tensor:
        """mu_n for a tensor of n (float64)."""
        return self.mu1 * self.ratio ** (n.double() - 1.0)

    def probs(self, n: torch.Tensor) -> torch.Tensor:
        """P(N = n) for a tensor of n (float64)."""
        return (1.0 - self.ratio) * self.ratio ** (n.double() - 1.0)

    def sample_batch(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """`count` independent N (int64) by the same inversion."""
        u = 1.0 - torch.rand(count, generator=generator, dtype=torch.float64)
        return 1 + torch.floor(torch.log(u) / math.log(self.ratio)).long()


class Zipf:
    """p_n = n^-s / zeta(s), mu_n = mu_1 zeta(s, n) / zeta(s) (Hurwitz zeta: the tail P(N >= n)).

    sum mu_n = mu_1 E[N] is finite only for s > 2, so `exponent` must exceed 2."""

    def __init__(self, mu: float = 1e-3, exponent: float = 3.0) -> None:
        require_positive("mu", mu)
        if not exponent > 2.0:
            raise ValueError(
                f"exponent must be > 2 (the step sizes mu_n = mu * P(N >= n) are summable only "
                f"then), got {exponent}"
            )
        self.mu1, self.exponent = mu, exponent
        self._zeta = self._hurwitz(1)

    def _hurwitz(self, n: int) -> float:
        s = torch.tensor(self.exponent, dtype=torch.float64)
        return float(torch.special.zeta(s, torch.tensor(float(n), dtype=torch.float64)))

    def mu(self, n: int) -> float:
        """Step size mu_n = mu_1 P(N >= n)."""
        return self.mu1 * self._hurwitz(n) / self._zeta

    def prob(self, n: int) -> float:
        """P(N = n)."""
        return n ** (-self.exponent) / self._zeta

    def mus(self, n: torch.Tensor) -> torch.Tensor:
        """mu_n for a tensor of n (float64)."""
        s = torch.tensor(self.exponent, dtype=torch.float64)
        return self.mu1 * torch.special.zeta(s, n.double()) / self._zeta

    def probs(self, n: torch.Tensor) -> torch.Tensor:
        """P(N = n) for a tensor of n (float64)."""
        return n.double() ** (-self.exponent) / self._zeta

    def sample_batch(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """`count` independent N (int64) by Devroye's rejection, redrawing the rejected ones."""
        am1 = self.exponent - 1.0
        b = 2.0**am1
        found = torch.zeros(count, dtype=torch.long)
        todo = torch.arange(count)
        while todo.numel():
            u, v = torch.rand(2, todo.numel(), generator=generator, dtype=torch.float64)
            x = torch.floor((1.0 - u) ** (-1.0 / am1))
            t = (1.0 + 1.0 / x) ** am1
            keep = (x >= 1) & (x < 2.0**62) & (v * x * (t - 1.0) / (b - 1.0) <= t / b)
            found[todo[keep]] = x[keep].long()
            todo = todo[~keep]
        return found

    def sample(self, generator: torch.Generator) -> int:
        """One N by Devroye's rejection method (exact; the one numpy's `zipf` uses)."""
        am1 = self.exponent - 1.0
        b = 2.0**am1
        while True:
            u, v = torch.rand(2, generator=generator, dtype=torch.float64).tolist()
            x = math.floor((1.0 - u) ** (-1.0 / am1))
            if not 1 <= x < 2**62:
                continue
            t = (1.0 + 1.0 / x) ** am1
            if v * x * (t - 1.0) / (b - 1.0) <= t / b:
                return x


Schedule = Geometric | Zipf
SCHEDULES = ("geometric", "zipf")


def make_schedule(name: str, mu: float, ratio: float, exponent: float) -> Schedule:
    """The schedule called `name` ("geometric" uses `ratio`, "zipf" uses `exponent`)."""
    if name == "geometric":
        return Geometric(mu, ratio)
    if name == "zipf":
        return Zipf(mu, exponent)
    raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {name!r}")
