"""Nonconvex test functions f: R^d -> R on one flat float64 vector, for critical-point benchmarks.

- `carmon_chain`: the zero-chain hard function of Carmon, Duchi, Hinder and Sidford (2020),
  f̄_T(x) = -Ψ(1)Φ(x₁) + Σ_{i=2}^T [Ψ(-x_{i-1})Φ(-x_i) - Ψ(x_{i-1})Φ(x_i)], with
  Ψ(t) = exp(1 - 1/(2t-1)²) for t > ½ (else 0) and Φ(t) = √e ∫_{-∞}^t e^{-s²/2} ds;
  ‖∇f̄_T(x)‖ > 1 whenever |x_T| < 1, and f̄_T(0) - inf f̄_T <= 12 T.
- `rosenbrock`: Σ_{i<d} 100 (x_{i+1} - x_i²)² + (1 - x_i)², minimum 0 at (1, ..., 1).
- `digits_mlp_loss`: full-batch cross-entropy of a tanh MLP on sklearn's bundled digits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

SQRT_2PI_E = math.sqrt(2.0 * math.pi * math.e)


def psi(t: Tensor) -> Tensor:
    """Ψ(t) = exp(1 - 1/(2t-1)²) for t > ½, else 0 (smooth; safe gradients at t <= ½)."""
    z = 2.0 * t - 1.0
    safe = torch.where(z > 0, z, torch.ones_like(z))
    return torch.where(z > 0, torch.exp(1.0 - 1.0 / safe**2), torch.zeros_like(z))


def phi(t: Tensor) -> Tensor:
    """Φ(t) = √e ∫_{-∞}^t e^{-s²/2} ds = √(2πe) · standard normal CDF."""
    return SQRT_2PI_E * 0.5 * (1.0 + torch.erf(t / math.sqrt(2.0)))


def carmon_chain(x: Tensor) -> Tensor:
    """f̄_T(x) for T = len(x) (unscaled: ℓ₁ <= 152, Hessian Lipschitz ℓ₂ <= 1000)."""
    one = torch.ones((), dtype=x.dtype, device=x.device)
    head = -psi(one) * phi(x[0])
    previous, current = x[:-1], x[1:]
    links = psi(-previous) * phi(-current) - psi(previous) * phi(current)
    return head + links.sum()


def rosenbrock(x: Tensor) -> Tensor:
    """The chained Rosenbrock function in d = len(x) >= 2 dimensions."""
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosenbrock_start(d: int) -> Tensor:
    """The classical start (-1.2, 1, -1.2, 1, ...) in float64."""
    return torch.tensor([-1.2 if i % 2 == 0 else 1.0 for i in range(d)], dtype=torch.float64)


def digits_mlp_loss(
    hidden: int, samples: int, seed: int
) -> tuple[Callable[[Tensor], Tensor], Tensor]:
    """(f, x0): the mean cross-entropy of a 64-`hidden`-10 tanh MLP on the first `samples`
    standardized digits as a function of its flat float64 weights, and a seeded init."""
    from sklearn.datasets import load_digits

    data = load_digits()
    inputs = torch.tensor(data.data[:samples], dtype=torch.float64)
    inputs = (inputs - inputs.mean(0)) / (inputs.std(0) + 1.0)
    labels = torch.tensor(data.target[:samples])
    shapes = [(hidden, 64), (hidden,), (10, hidden), (10,)]
    sizes = [math.prod(shape) for shape in shapes]

    def loss(x: Tensor) -> Tensor:
        w1, b1, w2, b2 = (
            piece.reshape(shape) for piece, shape in zip(x.split(sizes), shapes, strict=True)
        )
        logits = torch.tanh(inputs @ w1.T + b1) @ w2.T + b2
        return torch.nn.functional.cross_entropy(logits, labels)

    generator = torch.Generator().manual_seed(seed)
    x0 = torch.cat(
        [
            torch.randn(size, generator=generator, dtype=torch.float64) / math.sqrt(fan_in)
            for size, fan_in in zip(sizes, [64, 64, hidden, hidden], strict=True)
        ]
    )
    return loss, x0
