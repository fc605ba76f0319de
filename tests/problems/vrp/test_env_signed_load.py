"""The env under MVMoE's signed load rule: hand-computed masks and POMO starts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from problems.vrp.env import action_mask, random_feasible_rollout, reset, solution
from problems.vrp.generator import generate
from problems.vrp.instance import VRPBatch
from problems.vrp.validator import validate_batch


def signed_instance() -> VRPBatch:
    """Capacity 10; customer 1 delivers 6, customers 2 and 3 pick up 4 and 7; no windows."""
    return VRPBatch(
        locs=torch.tensor([[[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1]]]),
        linehaul_demand=torch.tensor([[0.0, 6.0, 0.0, 0.0]]),
        backhaul_demand=torch.tensor([[0.0, 0.0, 4.0, 7.0]]),
        capacity=torch.tensor([10.0]),
        time_windows=torch.tensor([[[0.0, torch.inf]] * 4]),
        service_time=torch.zeros(1, 4),
        distance_limit=torch.tensor([torch.inf]),
        open_route=torch.tensor([False]),
        mixed_backhaul=torch.tensor([False]),
        signed_load=torch.tensor([True]),
    )


def mask_after(prefix: list[int]) -> list[bool]:
    """The mask of the signed instance after replaying `prefix`."""
    state = reset(signed_instance(), prefix=torch.tensor([prefix]) if prefix else None)
    return action_mask(state)[0].tolist()


def test_signed_masks_by_hand() -> None:
    """Remaining capacity L: at the start linehaul 1 is left, so L = 10 and no pickup fits;
    after 1, L = 4 takes pickup 4 (L 8) but not 7; once no linehaul is left a route starts at
    L = 0 and takes 7 (L 7), after which 4 no longer fits (11 > 10)."""
    assert mask_after([]) == [False, True, False, False]
    assert mask_after([1]) == [True, False, True, False]
    assert mask_after([1, 2]) == [True, False, False, False]
    assert mask_after([1, 0]) == [False, False, True, True]
    assert mask_after([1, 0, 3]) == [True, False, False, False]
    assert mask_after([1, 2, 0]) == [False, False, False, True]


def test_without_the_flag_the_same_instance_is_strict() -> None:
    """The same instance with signed_load False follows the strict rule: pickups fit from the
    start (P + p <= Q) and after customer 1 both pickups do."""
    strict = replace(signed_instance(), signed_load=torch.tensor([False]))
    assert action_mask(reset(strict))[0].tolist() == [False, True, True, True]
    after_one = reset(strict, prefix=torch.tensor([[1]]))
    assert action_mask(after_one)[0].tolist() == [True, False, True, True]


def test_pomo_starts_at_legal_first_customers(device: str) -> None:
    """With signed backhauls, start s goes to the linehaul customer of rank s mod k (backhauls
    are illegal first moves while linehauls are left); every rollout validates."""
    batch = generate("VRPB", 10, 4, seed=2, convention="mvmoe", device=device)
    state = random_feasible_rollout(batch, torch.Generator().manual_seed(0), num_starts=10)
    first = state.actions[0].view(10, 4).cpu()
    for row in range(4):
        linehauls = torch.nonzero(batch.linehaul_demand[row].cpu() > 0).squeeze(1)
        assert len(linehauls) == 8  # 10 customers, floor(0.2 * 10) = 2 backhauls
        assert first[:, row].tolist() == [int(linehauls[s % 8]) for s in range(10)]
    costs = validate_batch(batch.index(state.instance), solution(state))
    assert np.isfinite(costs).all()
