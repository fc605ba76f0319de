"""BalanceKV's building blocks: the key/value kernel, the self-balancing walk and the halving.

The self-balancing walk (Alweiss, Liu, Sawhney 2021) colours vectors u_1, u_2, ... with signs
s_i, choosing s_i = +1 with probability 1/2 - gamma * <u_i, sum_{j<i} s_j u_j>, so every prefix of
the signed sum stays small. BalanceKV runs it in the feature space of a kernel K_ij = <u_i, u_j>
on keys and values, so each side of the colouring carries about half the attention mass; keeping
one side with weight 2 halves the cache with little attention error.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from optiforge.algorithms.kv_compression.base import gather_tokens


def balance_kernel(
    keys: Tensor,
    values: Tensor,
    valid: Tensor,
    temperature: float,
    beta: float,
    value_offset: float,
) -> Tensor:
    """K_ij = exp(temperature <k_i, k_j> / sqrt(d) - beta) (<v_i, v_j> + value_offset) per block.

    keys [..., blocks, B, d] are centred on their block's mean over the `valid` [blocks, B]
    tokens (padding is False and gets zero rows and columns). Returns [..., blocks, B, B].
    """
    mask = valid.to(keys.dtype).unsqueeze(-1)
    mean = (keys * mask).sum(-2, keepdim=True) / mask.sum(-2, keepdim=True).clamp_min(1.0)
    centred = (keys - mean) * mask
    logits = temperature * (centred @ centred.transpose(-1, -2)) / math.sqrt(keys.shape[-1])
    kernel = torch.exp(logits - beta) * (values @ values.transpose(-1, -2) + value_offset)
    return kernel * (mask * mask.transpose(-1, -2))


def self_balancing_walk(kernel: Tensor, gamma: float, uniform: Tensor) -> Tensor:
    """Signs [..., B] (+1 / -1) of the walk over a kernel [..., B, B] with uniforms [..., B].

    s_0 = +1; s_i = +1 iff uniform_i < 1/2 - gamma * sum_{j<i} K_ij s_j. The running field
    K s is updated one column per step: O(B) work per token, vectorized over the leading dims.
    """
    size = kernel.shape[-1]
    signs = kernel.new_zeros(kernel.shape[:-1])
    signs[..., 0] = 1.0
    field = kernel[..., :, 0].clone()
    for i in range(1, size):
        sign = torch.where(uniform[..., i] < 0.5 - gamma * field[..., i], 1.0, -1.0)
        signs[..., i] = sign
        field += kernel[..., :, i] * sign.unsqueeze(-1)
    return signs


def halve(signs: Tensor) -> tuple[Tensor, Tensor]:
    """Keep n // 2 of n signed tokens [..., n]: (index [..., n // 2] increasing, doubled).

    The dropped side is the one whose ceil(n/2)-th member comes first (at position `cut`); its
    members up to `cut` are dropped. The other side's tokens up to `cut` stand for both sides
    (weight 2, `doubled` True); every token after `cut` is kept as it is (weight 1).
    """
    n = signs.shape[-1]
    drop_count = n - n // 2
    positions = torch.arange(n, device=signs.device)
    firsts = []
    for side in (1.0, -1.0):
        reached = (signs == side).cumsum(-1) >= drop_count
        first = reached.to(torch.int8).argmax(-1)
        firsts.append(torch.where(reached.any(-1), first, n))
    cut = torch.minimum(*firsts)
    dropped_side = torch.where(firsts[0] <= firsts[1], 1.0, -1.0)
    drop = (signs == dropped_side.unsqueeze(-1)) & (positions <= cut.unsqueeze(-1))
    index = torch.argsort(drop.to(torch.int8), dim=-1, stable=True)[..., : n // 2]
    return index, index <= cut.unsqueeze(-1)


def halve_authors(signs: Tensor) -> tuple[Tensor, Tensor]:
    """The authors' rule (ksheth96/BalanceKV `balanced_walk`): keep n // 2 of n signs [..., n].

    For each side, the first position where its count reaches n // 2 (0 if it never does, as
    their argmax gives); `cut` is the later of the two and the side at `cut` is dropped up to
    there. The other side's tokens up to `cut` get weight 2, then the tokens after `cut` with
    weight 1 fill the rest. With n / 2 signs each this drops the side completing last, so every
    kept token is doubled. Returns (index [..., n // 2] increasing, doubled), like `halve`.
    """
    half = signs.shape[-1] // 2
    positions = torch.arange(signs.shape[-1], device=signs.device)
    firsts = [((signs == side).cumsum(-1) == half).to(torch.int8).argmax(-1) for side in (1, -1)]
    cut = torch.maximum(*firsts).unsqueeze(-1)
    drop = (signs == signs.gather(-1, cut)) & (positions <= cut)
    index = torch.argsort(drop.to(torch.int8), dim=-1, stable=True)[..., :half]
    return index, index <= cut


def recursive_halving(
    keys: Tensor,
    values: Tensor,
    halvings: int,
    signs: Callable[[Tensor, Tensor], Tensor],
    rule: Callable[[Tensor], tuple[Tensor, Tensor]] = halve,
) -> tuple[Tensor, Tensor]:
    """`halvings` rounds of `rule` (`halve` or `halve_authors`) on signs(kept keys, kept values
    scaled by their weights): the kept index [..., n >> halvings] and log-weights (log 2 per
    doubling, summed)."""
    index = torch.arange(keys.shape[-2], device=keys.device).expand(keys.shape[:-1])
    log_weights = keys.new_zeros(keys.shape[:-1])
    for _ in range(halvings):
        weighted = gather_tokens(values, index) * log_weights.exp().unsqueeze(-1)
        keep, doubled = rule(signs(gather_tokens(keys, index), weighted))
        index = index.gather(-1, keep)
        log_weights = log_weights.gather(-1, keep) + doubled * math.log(2.0)
    return index, log_weights
