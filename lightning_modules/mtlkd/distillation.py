"""Per-step policy distillation loss of MTL-KD (label-free: the teacher's distribution is the
target, no solver labels).

For one decoding state with legal actions A (the env's mask), student log-probabilities
log pi_S and teacher log-probabilities log pi_T over A, temperature tau:
    q = softmax(log pi_T / tau),  p = softmax(log pi_S / tau)          (over A only)
    forward: KL(q || p) = sum_a q_a (log q_a - log p_a)   mode-covering, = cross-entropy to the
             teacher's soft labels up to a constant (Hinton et al.'s KD; the default)
    reverse: KL(p || q) = sum_a p_a (log p_a - log q_a)   mode-seeking
and the loss is tau^2 KL (Hinton's scaling keeps gradient sizes comparable across tau).
Dividing log-probabilities by tau and renormalizing equals softmax(logits / tau), since
log-softmax only shifts the logits. Illegal actions carry -inf in both and are excluded.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

Direction = Literal["forward", "reverse"]
DIRECTIONS: tuple[str, ...] = ("forward", "reverse")


def distillation_kl(
    student_log_p: Tensor,
    teacher_log_p: Tensor,
    legal: Tensor,
    temperature: float = 1.0,
    direction: Direction = "forward",
) -> Tensor:
    """tau^2 KL per state row [R] from log-probabilities [R, N] and the legal mask [R, N]."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    neg_inf = torch.tensor(float("-inf"), dtype=student_log_p.dtype, device=legal.device)
    student = torch.log_softmax(torch.where(legal, student_log_p / temperature, neg_inf), -1)
    teacher = torch.log_softmax(torch.where(legal, teacher_log_p / temperature, neg_inf), -1)
    target, other = (teacher, student) if direction == "forward" else (student, teacher)
    terms = target.exp() * (target - other)
    return temperature**2 * torch.where(legal, terms, 0.0).sum(-1)
