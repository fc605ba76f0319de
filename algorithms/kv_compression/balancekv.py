"""BalanceKV (Han, Kapralov, Kochetkova, Sheth, Zandieh 2025): KV compression by vector balancing.

Each halving splits the tokens into blocks of `block_size`, runs the self-balancing walk over
each block in the kernel of key and value similarities, and keeps one side with weight 2
(`balanced_walk.halve`); k = log2(1/rate) halvings reach the rate, weights multiply, and the
kept tokens' log-weights are the attention bias. Constants (the authors' kvpress press,
ksheth96/BalanceKV): block_size 128 (their press; 256 in their single-layer code), gamma 4,
temperature 1, beta 0, value_offset 0.025 (keeps the kernel positive where values are
near-orthogonal, so keys still balance). Later halvings use the values scaled by the weights so
far, as the authors do. Choices of ours: kept tokens stay in their original order (the authors
reorder them, kept-with-weight-2 first); padding of the last block is masked out of the kernel
and of the block mean (the authors pad with zero keys that join both); the cut is where a side
first reaches ceil(n/2) members, so an odd n keeps floor(n/2) without dropping a token after the
cut, and a tie (n/2 signs each) drops the side that completes first (the authors' code drops
the one that completes last, doubling every kept token).

`variant="authors"` runs the authors' practical prefill variant as their code does it
(ksheth96/BalanceKV, `balanced_walk` in `balancekv_press.py` and `src/balanced_walk.py`): the
last block is padded with zero keys and values that join the block mean and the walk, and
`balanced_walk.halve_authors` cuts where the later side reaches n // 2 and drops that side. Kept
tokens stay in position order in both (the authors' reordering leaves them in order: the weight-2
tokens all come before the cut, the weight-1 ones after). Not reproduced: their 1e-8 added to the
value kernel (against 0.025), their layer-1 "needle mask" heuristic of the NIAH script, and
their walk in the model's dtype (both variants here compute the kernel in float64).
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.kv_compression.balanced_walk import (
    balance_kernel,
    halve,
    halve_authors,
    recursive_halving,
    self_balancing_walk,
)
from optiforge.algorithms.kv_compression.base import KVCompressor

VARIANTS = ("ours", "authors")


class BalanceKV(KVCompressor):
    """BalanceKV compressor; see the module docstring for the constants.

    Args:
        rate, sink_tokens, recent_tokens: as `KVCompressor`.
        block_size: tokens per walk (>= 1); the cost per token is linear in it.
        gamma: walk strength (>= 0); 0 gives uniform random halving.
        temperature: scale of the key inner products in the kernel.
        beta: shift of the kernel's exponent.
        value_offset: added to the value inner products (>= 0).
        variant: "ours" (masked padding, `halve`) or "authors" (zero padding in the mean and the
            walk, `halve_authors`); see the module docstring.
    """

    def __init__(
        self,
        rate: float,
        sink_tokens: int = 0,
        recent_tokens: int = 0,
        block_size: int = 128,
        gamma: float = 4.0,
        temperature: float = 1.0,
        beta: float = 0.0,
        value_offset: float = 0.025,
        variant: str = "ours",
    ) -> None:
        super().__init__(rate, sink_tokens, recent_tokens)
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        if not gamma >= 0.0:
            raise ValueError(f"gamma must be >= 0, got {gamma}")
        if not value_offset >= 0.0:
            raise ValueError(f"value_offset must be >= 0, got {value_offset}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.block_size = block_size
        self.gamma = gamma
        self.temperature = temperature
        self.beta = beta
        self.value_offset = value_offset
        self.variant = variant

    def signs(self, keys: Tensor, values: Tensor, generator: torch.Generator | None) -> Tensor:
        """Walk signs [..., n] of keys [..., n, d] and values [..., n, dv], block by block."""
        n = keys.shape[-2]
        blocks = -(-n // self.block_size)
        pad = blocks * self.block_size - n
        # The authors' padding is a real (zero) token of the block: it joins the block mean.
        limit = n if self.variant == "ours" else blocks * self.block_size
        valid = torch.arange(blocks * self.block_size, device=keys.device) < limit
        shape = (*keys.shape[:-2], blocks, self.block_size)
        # float64: exp of key inner products overflows float32 on real keys.
        keys64 = torch.nn.functional.pad(keys.double(), (0, 0, 0, pad)).reshape(*shape, -1)
        values64 = torch.nn.functional.pad(values.double(), (0, 0, 0, pad)).reshape(*shape, -1)
        kernel = balance_kernel(
            keys64,
            values64,
            valid.view(blocks, self.block_size),
            self.temperature,
            self.beta,
            self.value_offset,
        )
        uniform = torch.rand(shape, generator=generator, device=keys.device, dtype=torch.float64)
        return self_balancing_walk(kernel, self.gamma, uniform).flatten(-2)[..., :n]

    def select(
        self,
        keys: Tensor,
        values: Tensor,
        queries: Tensor | None,
        generator: torch.Generator | None,
    ) -> tuple[Tensor, Tensor]:
        """k halvings; the values entering each walk are scaled by the weights so far."""
        return recursive_halving(
            keys,
            values,
            self.halvings,
            lambda k, v: self.signs(k, v, generator),
            halve if self.variant == "ours" else halve_authors,
        )
