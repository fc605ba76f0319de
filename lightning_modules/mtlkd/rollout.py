"""The decoding loop shared by every MTL-KD policy (POMO teachers, heavy-decoder student).

A policy supplies `log_probs(state) -> [R, N]` (log pi(. | s_t) per state row, -inf where the
env's mask forbids); `roll_out` picks actions by sampling, greedily, or along given actions
(teacher forcing), steps the env and sums the log-likelihood. Legality is the env's business.
`recorded` keeps each step's state, mask and log pi, so that a caller that needs them again (the
student's distillation window) reuses them instead of replaying the env, recomputing the masks
and re-running the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from optiforge.problems.vrp import env
from optiforge.problems.vrp.env import VRPState

Decode = Literal["sampling", "greedy"]
DECODES: tuple[str, ...] = ("sampling", "greedy")


def sample(log_p: Tensor) -> Tensor:
    """One action per row drawn from exp(log_p) [R, N] by the Gumbel-max trick (exact, and
    several times faster than `torch.multinomial` on CPU); -inf entries are never drawn."""
    uniform = torch.rand_like(log_p).clamp_(min=torch.finfo(log_p.dtype).tiny)
    return (log_p - torch.log(-torch.log(uniform))).argmax(-1)


@dataclass(frozen=True)
class DecodingStep:
    """One step of a rollout: the state s_t, its mask [R, N] (the env's `action_mask`, True =
    legal) and log pi(. | s_t) [R, N] as the policy returned it."""

    state: VRPState
    mask: Tensor
    log_p: Tensor


def recorded(
    step: Callable[[VRPState, Tensor], Tensor], trace: list[DecodingStep]
) -> Callable[[VRPState], Tensor]:
    """`roll_out`'s `log_probs` for a policy step `step(state, mask)`: computes each state's
    mask once, and appends every step to `trace` (the rollout's t-th action is taken in
    trace[t].state)."""

    def log_probs(state: VRPState) -> Tensor:
        mask = env.action_mask(state)
        log_p = step(state, mask)
        trace.append(DecodingStep(state, mask, log_p))
        return log_p

    return log_probs


@dataclass(frozen=True)
class Rollout:
    """A finished decoding of R state rows.

    Attributes:
        state: the env's final state (`env.solution(state)`, `env.cost(state)` per row).
        actions: [R, T] the actions the policy took (reset's forced moves excluded), T = steps
            until every row was done.
        log_likelihood: [R] sum_t log pi(a_t | s_t) over those actions (idle depot moves of
            finished rows have probability 1 and add 0).
    """

    state: VRPState
    actions: Tensor
    log_likelihood: Tensor


def roll_out(
    log_probs: Callable[[VRPState], Tensor],
    state: VRPState,
    decode: Decode = "sampling",
    actions: Tensor | None = None,
) -> Rollout:
    """Decode from `state` until every row is done (at most 2 n steps), or along `actions`
    [R, T]; an illegal forced action raises, naming its row and step."""
    if decode not in DECODES:
        raise ValueError(f"decode must be one of {DECODES}, got {decode!r}")
    log_likelihood = torch.zeros(state.num_rows, device=state.current.device)
    taken: list[Tensor] = []
    max_steps = 2 * (state.batch.num_nodes - 1) if actions is None else actions.shape[1]
    for t in range(max_steps):
        if actions is None and bool(env.done(state).all()):
            break
        log_p = log_probs(state)
        if actions is not None:
            action = actions[:, t]
        elif decode == "greedy":
            action = log_p.argmax(-1)
        else:
            action = sample(log_p)
        chosen = log_p.gather(1, action[:, None]).squeeze(-1)
        if actions is not None and not bool(torch.isfinite(chosen).all()):
            row = int((~torch.isfinite(chosen)).nonzero()[0])
            raise ValueError(f"actions[{row}, {t}] = {int(action[row])} is illegal")
        log_likelihood = log_likelihood + chosen
        taken.append(action)
        state = env.step(state, action)
    if not bool(env.done(state).all()):
        raise RuntimeError(f"rollout not finished after {max_steps} steps")
    empty = torch.zeros(state.num_rows, 0, dtype=torch.long, device=state.current.device)
    return Rollout(state, torch.stack(taken, 1) if taken else empty, log_likelihood)
