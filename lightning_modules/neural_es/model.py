"""The Pareto set model of Neural-ES: preference -> block-wise Gaussian search distribution.

Lu et al. (NeurIPS 2025), "Neural-ES": the `D` variables are cut into `num_blocks` blocks of
`d_n = D / num_blocks` variables, generated one block after another by the same MLP. Its input
is the preference tiled over the solution's slots (the slots of blocks already generated hold
their sampled values) plus a 0/1 mask of the generated blocks; its heads give the block's mean
`mu [d_n]`, scale `s > 0` and rank-`r` factors `v_1..v_r` (Gram-Schmidt orthogonalised). A block
is drawn as

    x = mu + s (z + sum_k ((sqrt(1 + |v_k|^2) - 1) / |v_k|^2) (z . v_k) v_k),  z ~ N(0, I),

i.e. from `N(mu, s^2 (I + sum_k v_k v_k^T))`. Constants reproduced from the authors' code:
16 blocks, rank 1, two hidden layers of 1024 with leaky-ReLU (the width is configurable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass
class BlockParameters:
    """The search distribution of every block for a batch of `n` rows (`b` blocks)."""

    mean: Tensor  # [n, b, d_n]
    scale: Tensor  # [n, b]
    factors: Tensor  # [n, r, b, d_n]


class ParetoSetModel(nn.Module):
    """Maps preferences `[n, M]` to solutions `[n, D]` through `num_blocks` Gaussian blocks."""

    def __init__(
        self,
        dim: int,
        num_obj: int,
        num_blocks: int = 16,
        hidden_sizes: tuple[int, ...] = (1024, 1024),
        rank: int = 1,
    ) -> None:
        super().__init__()
        if num_blocks < 1 or dim % num_blocks:
            raise ValueError(f"num_blocks must be >= 1 and divide dim = {dim}, got {num_blocks}")
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        if not hidden_sizes or min(hidden_sizes) < 1:
            raise ValueError(f"hidden_sizes must be non-empty and positive, got {hidden_sizes}")
        self.dim, self.num_obj, self.num_blocks, self.rank = dim, num_obj, num_blocks, rank
        self.block_size = dim // num_blocks
        self.pref_slots = math.ceil(dim / num_obj) * num_obj  # tiled preference length
        layers: list[nn.Module] = []
        width = self.pref_slots + dim
        for size in hidden_sizes:
            layers += [nn.Linear(width, size), nn.LeakyReLU()]
            width = size
        self.body = nn.Sequential(*layers)
        self.mean_head = nn.Linear(width, self.block_size)
        self.scale_head = nn.Linear(width, 1)
        self.factor_head = nn.Linear(width, rank * self.block_size)

    def _heads(self, inputs: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Mean `[n, d_n]`, scale `[n]` and orthogonalised factors `[n, r, d_n]` of one block."""
        hidden = self.body(inputs)
        raw = self.factor_head(hidden).view(len(inputs), self.rank, self.block_size)
        factors: list[Tensor] = []
        for k in range(self.rank):  # Gram-Schmidt over the (few) factors, batched over rows
            v = raw[:, k]
            for u in factors:
                v = v - (v * u).sum(1, keepdim=True) / (u * u).sum(1, keepdim=True).clamp(1e-12) * u
            factors.append(v)
        return (
            self.mean_head(hidden),
            self.scale_head(hidden).abs().squeeze(1),
            torch.stack(factors, dim=1),
        )

    def forward(self, prefs: Tensor, noise: Tensor | None = None) -> tuple[Tensor, BlockParameters]:
        """Solutions `x [n, D]` for `prefs [n, M]` and the blocks' parameters (with autograd).

        `noise [n, D]` is the standard normal draw `z`; None gives the means (each block's mean
        fed to the next blocks), the model's answer for a preference.
        """
        n = len(prefs)
        tiled = prefs.repeat(1, self.pref_slots // self.num_obj)
        inputs = torch.cat(
            [tiled, torch.zeros(n, self.dim, dtype=prefs.dtype, device=prefs.device)], 1
        )
        means, scales, factors = [], [], []
        for block in range(self.num_blocks):  # autoregressive over blocks, batched over rows
            cols = slice(block * self.block_size, (block + 1) * self.block_size)
            mean, scale, factor = self._heads(inputs)
            means.append(mean)
            scales.append(scale)
            factors.append(factor)
            with torch.no_grad():
                value = mean
                if noise is not None:
                    z = noise[:, cols]
                    sq = (factor**2).sum(2, keepdim=True)  # [n, r, 1]
                    coef = (torch.sqrt(1.0 + sq) - 1.0) / sq.clamp_min(1e-16)
                    y = z + (coef * (factor * z.unsqueeze(1)).sum(2, keepdim=True) * factor).sum(1)
                    value = mean + scale.unsqueeze(1) * y
                inputs = inputs.clone()
                inputs[:, cols] = value
                inputs[:, self.pref_slots + cols.start : self.pref_slots + cols.stop] = 1.0
        params = BlockParameters(
            torch.stack(means, 1), torch.stack(scales, 1), torch.stack(factors, 2)
        )
        return inputs[:, : self.dim].detach(), params
