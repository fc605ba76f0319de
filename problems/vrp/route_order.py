"""Put the routes of signed-load solutions into an order MVMoE's env accepts.

MVMoE's env (`envs/VRPBEnv.py` and its siblings in RoyalSkye/Routing-MVMoE) drives the routes of
a solution in the order given and starts a route full (remaining capacity Q) while some linehaul
customer is unserved, so a backhaul-only route driven before the last route with a linehaul
overfills at its first pickup. Our env and R3C judge the signed rule per route (any order), so
their solutions may have such a route early. Routes are independent: moving whole routes keeps
the cost and every per-route constraint (load, length, time windows: each route starts at the
depot's earliest time). `mvmoe_route_order` moves every route without a linehaul customer behind
the routes with one, keeping the order within each group; a solution whose routes each pass the
per-route rule then passes MVMoE's rule as given (`validator.validate`, `route_order="as_given"`),
and one whose routes do not cannot pass in any order. Instances without `signed_load` are left
as they are.
"""

from __future__ import annotations

import torch
from torch import Tensor


def mvmoe_route_order(sequence: Tensor, linehaul_demand: Tensor, signed_load: Tensor) -> Tensor:
    """`sequence` [B, T] (0-separated routes, validator format) with, on rows where
    `signed_load` [B] is True, the routes without a linehaul customer (by `linehaul_demand`
    [B, N]) moved behind those with one, order within each group kept; other rows unchanged.

    Each 0 opens a route (a leading 0 the first): [0, 4, 0, 1, 2, 0] with customer 4 a backhaul
    becomes [0, 1, 2, 0, 4, 0] (the trailing empty route stays last).
    """
    length = sequence.shape[1]
    if length == 0:
        return sequence
    route = (sequence == 0).long().cumsum(1)  # [B, T] route id, 0 before a first depot
    is_linehaul = linehaul_demand.gather(1, sequence) > 0
    has_linehaul = torch.zeros(sequence.shape[0], length + 1, dtype=torch.bool)
    has_linehaul = has_linehaul.to(sequence.device).scatter_reduce(1, route, is_linehaul, "amax")
    route_first = has_linehaul.gather(1, route) | (route == 0)
    last = signed_load[:, None] & ~route_first  # [B, T] positions in routes moved to the end
    position = torch.arange(length, device=sequence.device)
    key = last.long() * length + position
    return sequence.gather(1, torch.argsort(key, 1))
