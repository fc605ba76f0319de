"""The exact saddle point, objective and duality gap of the robust regression saddle.

Everything follows from the global moments H = A^T A / N, c = A^T b / N and s = |b|^2 / N:
f(x, y) = 1/2 (x^T H x - 2 c^T x + s) + (H x - c)^T y + lambda_x/2 |x|^2 - lambda_y/2 |y|^2.
The saddle solves [[H + lambda_x I, H], [-H, lambda_y I]] [x; y] = [c; -c]. Distributed ranks
sum their shards' moments with one all-reduce at setup (not counted as algorithm communication).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def shard_moments(features: Tensor, targets: Tensor) -> tuple[Tensor, Tensor, Tensor, int]:
    """Sums A^T A [d, d], A^T b [d], |b|^2 and the sample count over shards [R, n, d], [R, n]."""
    flat, labels = features.reshape(-1, features.shape[-1]), targets.reshape(-1)
    return flat.T @ flat, flat.T @ labels, labels @ labels, labels.numel()


@dataclass(frozen=True)
class SaddleReference:
    """Exact quantities of f from its moments (float64): `gram` H, `cross` c, `target_square` s."""

    gram: Tensor
    cross: Tensor
    target_square: float
    lambda_x: float
    lambda_y: float

    @classmethod
    def from_sums(
        cls,
        gram: Tensor,
        cross: Tensor,
        square: Tensor,
        count: int,
        lambda_x: float,
        lambda_y: float,
    ) -> SaddleReference:
        """From summed moments of `count` samples."""
        return cls(gram / count, cross / count, float(square) / count, lambda_x, lambda_y)

    @property
    def dim(self) -> int:
        """d, the size of x (and of y)."""
        return self.cross.shape[0]

    def saddle(self) -> Tensor:
        """z* = [x*; y*] from the 2d x 2d linear system."""
        eye = torch.eye(self.dim, dtype=self.gram.dtype, device=self.gram.device)
        system = torch.cat(
            [
                torch.cat([self.gram + self.lambda_x * eye, self.gram], dim=1),
                torch.cat([-self.gram, self.lambda_y * eye], dim=1),
            ]
        )
        return torch.linalg.solve(system, torch.cat([self.cross, -self.cross]))

    def value(self, z: Tensor) -> Tensor:
        """f(x, y) at z = [x; y]."""
        x, y = z[: self.dim], z[self.dim :]
        fit = 0.5 * (x @ self.gram @ x - 2 * self.cross @ x + self.target_square)
        return fit + (self.gram @ x - self.cross) @ y + self.regularizer(x, y)

    def regularizer(self, x: Tensor, y: Tensor) -> Tensor:
        """lambda_x/2 |x|^2 - lambda_y/2 |y|^2."""
        return 0.5 * (self.lambda_x * x @ x - self.lambda_y * y @ y)

    def gap(self, z: Tensor) -> Tensor:
        """Duality gap max_y' f(x, y') - min_x' f(x', y) >= 0, zero only at the saddle."""
        x, y = z[: self.dim], z[self.dim :]
        eye = torch.eye(self.dim, dtype=self.gram.dtype, device=self.gram.device)
        slope = self.gram @ x - self.cross
        fit = 0.5 * (x @ self.gram @ x - 2 * self.cross @ x + self.target_square)
        primal = fit + 0.5 * self.lambda_x * x @ x + slope @ slope / (2 * self.lambda_y)
        pull = self.cross - self.gram @ y
        best = torch.linalg.solve(self.gram + self.lambda_x * eye, pull)
        dual = 0.5 * self.target_square - self.cross @ y - 0.5 * pull @ best
        return primal - (dual - 0.5 * self.lambda_y * y @ y)


def scalar_saddle(h: float, g: float, lambda_x: float, lambda_y: float) -> tuple[float, float]:
    """Closed form for d = 1 with H = h, c = g: x* = g (lambda_y + h) / (lambda_y (h + lambda_x)
    + h^2), y* = (h x* - g) / lambda_y."""
    x = g * (lambda_y + h) / (lambda_y * (h + lambda_x) + h * h)
    return x, (h * x - g) / lambda_y
