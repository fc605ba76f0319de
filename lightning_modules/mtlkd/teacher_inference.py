"""Inference modes of the MTL-KD policies: greedy, multi-start, multi-start x 8 augmentations.

- "greedy": one greedy rollout per instance from the depot.
- "multistart": S greedy rollouts per instance, start s forced to customer s + 1 (POMO); the
  best of the S is kept. With S = n it contains the "greedy" rollout (the start at greedy's
  first customer continues exactly as greedy), so its cost is never worse.
- "augment": "multistart" on each of the 8 symmetric copies of `augment_8`, best of 8 S. Copy
  0 is the identity, so it is never worse than "multistart" (up to float rounding of ties).
Selection uses the env's cost; the reported cost is recomputed by the validator (the module).
The env judges MVMoE's signed load rule per route; the returned routes are put into an order
MVMoE's env accepts (`optiforge.problems.vrp.route_order`, same cost).
"""

from __future__ import annotations

from typing import Literal, Protocol

import torch
from torch import Tensor

from optiforge.lightning_modules.mtlkd.rollout import Decode, Rollout
from optiforge.problems.vrp import env
from optiforge.problems.vrp.augment import augment_8
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.route_order import mvmoe_route_order

InferenceMode = Literal["greedy", "multistart", "augment"]
INFERENCE_MODES: tuple[str, ...] = ("greedy", "multistart", "augment")


class MultiStartPolicy(Protocol):
    """Any MTL-KD policy: `policy(batch, num_starts, decode)` rolls out in the env's layout."""

    def __call__(self, batch: VRPBatch, num_starts: int, decode: Decode) -> Rollout: ...


def num_starts_for(num_customers: int, max_starts: int | None) -> int:
    """POMO's S = n starts, at most `max_starts` when given."""
    return num_customers if max_starts is None else min(num_customers, max_starts)


@torch.no_grad()
def solve(
    policy: MultiStartPolicy,
    batch: VRPBatch,
    mode: InferenceMode,
    max_starts: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Best solution per instance: node sequences [B, T] (validator format) and env costs [B].

    Rows of the copies are laid out as (start s, copy k, instance b) -> s * K B + k B + b with K
    = 1 or 8, so the K S candidates of instance b form column b of a [K S, B] view.
    """
    if mode not in INFERENCE_MODES:
        raise ValueError(f"inference mode must be one of {INFERENCE_MODES}, got {mode!r}")
    copies = augment_8(batch) if mode == "augment" else batch
    starts = 1 if mode == "greedy" else num_starts_for(batch.num_nodes - 1, max_starts)
    rollout = policy(copies, starts, "greedy")
    costs = env.cost(rollout.state).view(-1, batch.batch_size)  # [K S, B]
    best = costs.argmin(0)
    rows = best * batch.batch_size + torch.arange(batch.batch_size, device=best.device)
    sequence = mvmoe_route_order(
        env.solution(rollout.state)[rows], batch.linehaul_demand, batch.signed_load
    )
    return sequence, costs.gather(0, best[None]).squeeze(0)
