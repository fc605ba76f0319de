"""The result of compressing a key/value cache: kept tokens, their positions and log-weights."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class CompressedKV:
    """Kept tokens of a cache, batched over leading dims (batch, heads).

    Attributes:
        keys: [..., m, d] kept keys, in their original order.
        values: [..., m, dv] kept values.
        log_weights: [..., m] log of each kept token's weight (0 for tokens kept exactly); added
            to the attention logits (see `weighted_attention`).
        positions: [..., m] int64 position of each kept token in the original sequence.
    """

    keys: Tensor
    values: Tensor
    log_weights: Tensor
    positions: Tensor

    @property
    def num_tokens(self) -> int:
        """m, the number of kept tokens."""
        return self.keys.shape[-2]

    @staticmethod
    def concat(parts: list[CompressedKV]) -> CompressedKV:
        """The parts one after the other along the token axis."""
        return CompressedKV(
            keys=torch.cat([part.keys for part in parts], dim=-2),
            values=torch.cat([part.values for part in parts], dim=-2),
            log_weights=torch.cat([part.log_weights for part in parts], dim=-1),
            positions=torch.cat([part.positions for part in parts], dim=-1),
        )

    @staticmethod
    def exact(keys: Tensor, values: Tensor, start: int) -> CompressedKV:
        """Tokens kept as they are (weight 1), the first at position `start`."""
        positions = torch.arange(start, start + keys.shape[-2], device=keys.device)
        return CompressedKV(
            keys=keys,
            values=values,
            log_weights=keys.new_zeros(keys.shape[:-1]),
            positions=positions.expand(keys.shape[:-1]),
        )
