"""Regularized robust linear regression as a finite-sum strongly-convex-strongly-concave saddle.

Sample j = (a_j, b_j), a_j in R^d, has residual r_j = a_j^T x - b_j and

    f_j(x, y) = 1/2 r_j^2 + r_j a_j^T y + lambda_x/2 |x|^2 - lambda_y/2 |y|^2,

f = (1/N) sum_j f_j, solved as min_x max_y f. The adversary y moves every prediction by a_j^T y
and is paid r_j a_j^T y: the first-order (in y) form of the paper's (x^T (a_j + y) - b_j)^2 / 2
with the perturbation on the weights instead of the features, which keeps f quadratic, so the
saddle is one linear system (`saddle.py`). f is lambda_x-strongly convex in x and
lambda_y-strongly concave in y. Algorithms use the monotone operator
g_j(z) = [grad_x f_j; -grad_y f_j] of z = [x; y] in R^{2d}.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class RobustRegression:
    """The per-sample operators g_j of the regularized robust regression saddle."""

    lambda_x: float
    lambda_y: float

    def __post_init__(self) -> None:
        for name in ("lambda_x", "lambda_y"):
            if not getattr(self, name) > 0.0:
                raise ValueError(
                    f"{name}: must be > 0 (strong convexity), got {getattr(self, name)}"
                )

    def components(self, z: Tensor, features: Tensor, targets: Tensor) -> Tensor:
        """g_j(z_i) for node rows z [R, 2d], samples features [R, B, d], targets [R, B]:
        [a_j (r_j + a_j^T y) + lambda_x x ; -a_j r_j + lambda_y y], shape [R, B, 2d]."""
        dim = features.shape[-1]
        x, y = z[:, None, :dim], z[:, None, dim:]
        residual = (features * x).sum(-1) - targets
        shift = (features * y).sum(-1)
        grad_x = features * (residual + shift)[..., None] + self.lambda_x * x
        minus_grad_y = -features * residual[..., None] + self.lambda_y * y
        return torch.cat([grad_x, minus_grad_y.expand_as(grad_x)], dim=-1)

    def local_operator(self, z: Tensor, features: Tensor, targets: Tensor) -> Tensor:
        """Each node's full local operator (1/n) sum_j g_j(z_i) over its shard, shape [R, 2d]."""
        return self.components(z, features, targets).mean(dim=1)
