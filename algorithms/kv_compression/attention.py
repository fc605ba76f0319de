"""Softmax attention over a (possibly compressed) key/value set with a log-weight bias.

A compressed cache stands for the full one when each kept token i carries a weight w_i: the
attention numerator and denominator sum w_i exp(<q, k_i> / sqrt(d)) instead of exp(...), which is
plain softmax attention with the bias log w_i added to the logits. BalanceKV's error metric
(relative Frobenius error of the attention output) is here too.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def weighted_attention(
    queries: Tensor, keys: Tensor, values: Tensor, log_weights: Tensor | None = None
) -> Tensor:
    """softmax(Q K^T / sqrt(d) + log w) V for queries [..., q, d], keys [..., n, d],
    values [..., n, dv], log_weights [..., n] (None: all weights 1). Returns [..., q, dv]."""
    logits = queries @ keys.transpose(-1, -2) / math.sqrt(queries.shape[-1])
    if log_weights is not None:
        logits = logits + log_weights.unsqueeze(-2)
    return torch.softmax(logits, dim=-1) @ values


def relative_error(approx: Tensor, exact: Tensor) -> Tensor:
    """||approx - exact||_F / ||exact||_F over all entries (the paper's single-layer metric)."""
    return torch.linalg.vector_norm(approx - exact) / torch.linalg.vector_norm(exact)
