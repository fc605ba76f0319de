"""Light pointer decoder of the POMO teacher (Kool et al. 2019, Kwon et al. 2020).

Per decoding step and state row, with node embeddings h_j [B, N, d] computed once:
    q     = W_q [h_current ; context features]                     (one query per row)
    g     = W_o MHA(q, W_k h, W_v h)       glimpse: masked multi-head attention, M heads
    u_j   = C tanh(g . h_j / sqrt(d))      single-head compatibility, clipped at C (= 10)
    log pi(j) = log_softmax_j(u_j), with u_j = -inf for actions the env's mask forbids.
Keys, values and the single-head key h are computed once per instance and shared by all S
starts of that instance (POMO's layout: rows are grouped as [B, S] inside the decoder).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F


@dataclass(frozen=True)
class DecoderCache:
    """Per-instance projections: keys, values [B, M, N, d / M]; pointer keys h [B, N, d]."""

    keys: Tensor
    values: Tensor
    pointer_keys: Tensor


class PointerDecoder(nn.Module):
    """Next-node log-probabilities [B, S, N] from queries [B, S, d + F] and a mask [B, S, N].

    Args:
        dim: embedding size d.
        context_features: F, number of state features appended to the current node embedding.
        num_heads: glimpse heads M (d must be a multiple).
        logit_clip: C, the tanh clipping of the compatibility logits (> 0).
    """

    def __init__(
        self, dim: int, context_features: int, num_heads: int = 8, logit_clip: float = 10.0
    ) -> None:
        super().__init__()
        if not logit_clip > 0:
            raise ValueError(f"logit_clip must be > 0, got {logit_clip}")
        self.num_heads = num_heads
        self.logit_clip = logit_clip
        self.query = nn.Linear(dim + context_features, dim, bias=False)
        self.key_value = nn.Linear(dim, 2 * dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def precompute(self, h: Tensor) -> DecoderCache:
        """Project node embeddings [B, N, d] once per rollout."""
        b, n, d = h.shape
        k, v = self.key_value(h).view(b, n, 2, self.num_heads, d // self.num_heads).unbind(2)
        return DecoderCache(k.transpose(1, 2), v.transpose(1, 2), h)

    def forward(self, cache: DecoderCache, query_input: Tensor, mask: Tensor) -> Tensor:
        """log pi [B, S, N]; `mask` True = legal (every row has at least one legal action)."""
        b, s, _ = query_input.shape
        d = cache.pointer_keys.shape[-1]
        q = self.query(query_input).view(b, s, self.num_heads, d // self.num_heads)
        glimpse = F.scaled_dot_product_attention(
            q.transpose(1, 2), cache.keys, cache.values, attn_mask=mask[:, None]
        )
        glimpse = self.out(glimpse.transpose(1, 2).reshape(b, s, d))
        compatibility = glimpse @ cache.pointer_keys.transpose(1, 2) / math.sqrt(d)
        logits = self.logit_clip * torch.tanh(compatibility)
        return torch.log_softmax(logits.masked_fill(~mask, -math.inf), -1)
