"""A small pre-LayerNorm causal transformer over characters (GPT-2 layout, learned positions)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from optiforge.lightning_modules.transformer_sizes import check_transformer_sizes

INIT_STD = 0.02


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t only attends to positions <= t."""

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.dropout = dropout
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        """[batch, T, d_model] -> [batch, T, d_model]."""
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        heads = [t.view(batch, length, self.n_heads, -1).transpose(1, 2) for t in (q, k, v)]
        out = F.scaled_dot_product_attention(
            *heads, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        return self.proj(out.transpose(1, 2).reshape(batch, length, width))


class Block(nn.Module):
    """x + attn(LN(x)), then x + MLP(LN(x)) with a 4x wide GELU MLP."""

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.attn_norm = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout)
        self.mlp_norm = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.dropout(self.attn(self.attn_norm(x)))
        return x + self.dropout(self.mlp(self.mlp_norm(x)))


class CharTransformer(nn.Module):
    """Token + position embeddings, `n_layers` causal blocks, a final LayerNorm and a linear head.

    Weights start N(0, 0.02) (the residual output projections N(0, 0.02 / sqrt(2 n_layers)),
    GPT-2's init), biases at zero. Besides training well with AdamW, this keeps every weight
    inside the Scion family's norm balls at the usual radii, so the Frank-Wolfe gap of
    `optiforge.optimizers.ClippedScion` starts non-negative.

    Args:
        vocab_size: number of distinct tokens (>= 1).
        context_length: longest input sequence, the size of the position table (>= 1).
        d_model: width of the residual stream, a multiple of `n_heads`.
        n_heads: attention heads per block (>= 1).
        n_layers: number of blocks (>= 1).
        dropout: dropout on attention weights and residual branches, in [0, 1).
    """

    def __init__(
        self,
        vocab_size: int,
        context_length: int,
        d_model: int,
        n_heads: int,
        n_layers: int,
        dropout: float,
    ) -> None:
        super().__init__()
        sizes = {"vocab_size": vocab_size, "context_length": context_length, "n_layers": n_layers}
        check_transformer_sizes(d_model, n_heads, **sizes)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"model.dropout must be in [0, 1), got {dropout}")
        self.context_length = context_length
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(context_length, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, dropout) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self._init_weights(n_layers)

    def _init_weights(self, n_layers: int) -> None:
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=INIT_STD)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)
        for block in self.blocks:
            for residual_out in (block.attn.proj, block.mlp[-1]):
                nn.init.normal_(residual_out.weight, std=INIT_STD / math.sqrt(2 * n_layers))

    def forward(self, ids: Tensor) -> Tensor:
        """Next-token logits [batch, T, vocab_size] for token ids [batch, T], T <= context."""
        length = ids.shape[1]
        if length > self.context_length:
            raise ValueError(
                f"input length {length} exceeds model.context_length={self.context_length}"
            )
        positions = torch.arange(length, device=ids.device)
        x = self.dropout(self.token_embedding(ids) + self.position_embedding(positions))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
