"""The env under MVMoE's signed load rule: hand-computed masks and POMO starts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from optiforge.problems.vrp.env import action_mask, random_feasible_rollout, reset, solution
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.validator import validate_batch


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
    """Per route: a fresh route takes anything; after delivering 6 it may pick up 4 (<= 6) but
    not 7, and after 4 nothing more (4 + 7 > 6); a route that starts with a pickup stays
    pickup-only (no delivery after it) and picks up at most 10 (7 + 4 > 10)."""
    assert mask_after([]) == [False, True, True, True]
    assert mask_after([1]) == [True, False, True, False]
    assert mask_after([1, 2]) == [True, False, False, False]
    assert mask_after([1, 0]) == [False, False, True, True]
    assert mask_after([3]) == [True, False, False, False]
    assert mask_after([2]) == [True, False, False, False]
    assert mask_after([2, 0]) == [False, True, False, True]


def test_without_the_flag_the_same_instance_is_strict() -> None:
    """The same instance with signed_load False follows the strict rule: pickups fit from the
    start (P + p <= Q) and after customer 1 both pickups do."""
    strict = replace(signed_instance(), signed_load=torch.tensor([False]))
    assert action_mask(reset(strict))[0].tolist() == [False, True, True, True]
    after_one = reset(strict, prefix=torch.tensor([[1]]))
    assert action_mask(after_one)[0].tolist() == [True, False, True, True]


def pickups_before_deliveries(routes: list[list[int]], batch: VRPBatch, row: int) -> bool:
    """Whether a backhaul-only route comes before a route with a linehaul (an order MVMoE's
    driving-order env refuses: it starts every route full while a linehaul is unserved)."""
    linehaul, backhaul = batch.linehaul_demand[row].cpu(), batch.backhaul_demand[row].cpu()
    seen_pickup_only = False
    for route in routes:
        if linehaul[route].sum() > 0 and seen_pickup_only:
            return True
        seen_pickup_only |= bool(linehaul[route].sum() == 0 and backhaul[route].sum() > 0)
    return False


def test_routes_replay_in_any_order(device: str) -> None:
    """Signed solutions stay legal when their routes are replayed in another order (R3C's
    route reordering): every random rollout's routes, reversed, replay through the env and
    validate at the same cost; some reversed orders put a backhaul-only route first."""
    batch = generate("VRPB", 12, 8, seed=2, convention="mvmoe", device=device)
    state = random_feasible_rollout(batch, torch.Generator().manual_seed(0))
    forward = validate_batch(batch, solution(state), route_order="any")
    reversed_routes = [split_routes(row)[::-1] for row in solution(state).cpu().tolist()]
    actions = [[c for route in routes for c in [0, *route]][1:] for routes in reversed_routes]
    length = max(len(a) for a in actions)
    prefix = torch.tensor([a + [-1] * (length - len(a)) for a in actions], device=device)
    replayed = reset(batch, prefix=prefix)
    replayed_costs = validate_batch(batch, solution(replayed), route_order="any")
    np.testing.assert_allclose(replayed_costs, forward, atol=1e-9)
    assert any(pickups_before_deliveries(r, batch, row) for row, r in enumerate(reversed_routes))
