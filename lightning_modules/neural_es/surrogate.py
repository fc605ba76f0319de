"""The Neural-ES natural-gradient surrogate loss and the rank weights it is fed.

Lu et al. (NeurIPS 2025): a loss whose autograd gradient with respect to each block's mean and
covariance parameters equals minus the rank-weighted natural-gradient estimate of the expected
fitness, so that backpropagating it through the network ascends the natural gradient. Per
sample with weight `w` and block `(mu, s, v_1..v_r)`, `delta = x - stopgrad(mu)`:

    L = -w <delta, mu> + w [ (d_n + tr) / 2 * s^4 - (|delta|^2 + sum_k (v_k . delta)^2) s^2 ],
    tr = sum_k (2 |v_k|^2 + |v_k|^4).

Its derivative in `mu` is `-w delta`; in `s^2` (with `v = 0`) `-w (|delta|^2 - d_n s^2)`: the
natural gradients of `E[f]` for the mean and the isotropic variance, Monte Carlo estimated.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from optiforge.lightning_modules.neural_es.model import BlockParameters


def rank_weights(num_samples: int, device: torch.device | str = "cpu") -> Tensor:
    """CMA-style log weights by rank (best first), unnormalised as in the authors' code:
    `log(N / 2 + 1/2) - log(1 + i)`, positive for the better half: `[N]`."""
    ranks = torch.arange(num_samples, dtype=torch.float32, device=device)
    return math.log(num_samples // 2 + 0.5) - torch.log1p(ranks)


def weights_from_fitness(fitness: Tensor, num_samples: int) -> Tensor:
    """Rank weight of each of the `K * N` samples (fitness `[K * N]`, lower is better), ranked
    within each preference's group of `N` consecutive samples: `[K * N]`."""
    groups = fitness.view(-1, num_samples)
    order = groups.argsort(dim=1, stable=True)
    weights = torch.empty_like(groups, dtype=torch.float32)
    table = rank_weights(num_samples, fitness.device).expand_as(weights).contiguous()
    weights.scatter_(1, order, table)
    return weights.view(-1)


def natural_gradient_surrogate(x: Tensor, params: BlockParameters, weights: Tensor) -> Tensor:
    """The surrogate loss (scalar) for samples `x [n, D]` drawn from `params`, weights `[n]`."""
    n, blocks, size = params.mean.shape
    x = x.view(n, blocks, size).to(params.mean)
    weights = weights.to(params.mean)
    delta = x - params.mean.detach()
    mean_term = -(weights * (delta * params.mean).sum(dim=(1, 2))).sum()
    s2 = params.scale**2  # [n, b]
    sq = (params.factors**2).sum(dim=3)  # [n, r, b]
    trace = (2.0 * sq + sq**2).sum(dim=1)  # [n, b]
    along = torch.einsum("nbd,nrbd->nrb", delta, params.factors).pow(2).sum(dim=1)  # [n, b]
    spread = (size + trace) / 2.0 * s2**2 - ((delta**2).sum(dim=2) + along) * s2
    return mean_term + (weights.unsqueeze(1) * spread).sum()
