"""Heavy attention encoder of the POMO teacher (Kwon et al. 2020, after Kool et al.'s AM).

Depot and customers are projected by separate linear layers, then `num_layers` post-norm
transformer layers without positional encoding run over all N nodes:
    h <- Norm(h + MHA(h)),  h <- Norm(h + FF(h)),  FF = Linear(d, ff) -> ReLU -> Linear(ff, d).
Norm is POMO's instance norm ("instance": each feature normalised over the N nodes of its own
instance, learnable affine), or RMSNorm over the feature dimension ("rms", RouteFinder's RF-TE
choice, kept post-norm here). Both act on one instance at a time, so an instance's embedding
does not depend on the rest of the batch (the augmented copies of `augment_8` and the
un-augmented batch see the same numbers up to float rounding).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

Norm = Literal["instance", "rms"]
NORMS: tuple[str, ...] = ("instance", "rms")


class _InstanceNorm(nn.Module):
    """Instance norm over the node axis for [B, N, d] inputs (nn.InstanceNorm1d wants [B, d, N])."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm1d(dim, affine=True, track_running_stats=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x.transpose(1, 2)).transpose(1, 2)


def _norm(kind: str, dim: int) -> nn.Module:
    if kind == "instance":
        return _InstanceNorm(dim)
    if kind == "rms":
        return nn.RMSNorm(dim)
    raise ValueError(f"norm must be one of {NORMS}, got {kind!r}")


class EncoderLayer(nn.Module):
    """One post-norm self-attention + feed-forward layer on [B, N, d]."""

    def __init__(self, dim: int, num_heads: int, ff_dim: int, norm: Norm) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.norm_attention = _norm(norm, dim)
        self.feed_forward = nn.Sequential(nn.Linear(dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, dim))
        self.norm_feed_forward = _norm(norm, dim)

    def forward(self, h: Tensor) -> Tensor:
        b, n, d = h.shape
        q, k, v = self.qkv(h).view(b, n, 3, self.num_heads, d // self.num_heads).unbind(2)
        attended = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        )
        h = self.norm_attention(h + self.out(attended.transpose(1, 2).reshape(b, n, d)))
        return self.norm_feed_forward(h + self.feed_forward(h))


class AttentionEncoder(nn.Module):
    """Node embeddings [B, N, d] from depot features [B, 1, F0] and node features [B, N, F].

    Args:
        depot_features: F0, input size of the depot projection.
        customer_features: F, input size of the customer projection.
        dim: embedding size d (a multiple of `num_heads`).
        num_layers: transformer layers.
        num_heads: attention heads.
        ff_dim: hidden size of the feed-forward sublayer.
        norm: "instance" (POMO) or "rms" (RMSNorm).
    """

    def __init__(
        self,
        depot_features: int,
        customer_features: int,
        dim: int = 128,
        num_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        norm: Norm = "instance",
    ) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim={dim} must be a multiple of num_heads={num_heads}")
        self.embed_depot = nn.Linear(depot_features, dim)
        self.embed_customers = nn.Linear(customer_features, dim)
        self.layers = nn.ModuleList(
            EncoderLayer(dim, num_heads, ff_dim, norm) for _ in range(num_layers)
        )

    def forward(self, depot: Tensor, customers: Tensor) -> Tensor:
        """`customers` includes the depot's row (row 0), which is replaced by the depot token."""
        h = torch.cat([self.embed_depot(depot), self.embed_customers(customers[:, 1:])], 1)
        for layer in self.layers:
            h = layer(h)
        return h
