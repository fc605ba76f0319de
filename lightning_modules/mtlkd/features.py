"""Variant-aware input features of the POMO teacher (RouteFinder / MTPOMO conventions).

One layout serves all 16 variants: an attribute the instance does not have shows up as the
neutral value 0 (RouteFinder replaces inf by 0 before the projection, MTPOMO zeroes absent
attributes), so a CVRP instance and the CVRP part of a VRPTW instance look alike. Demands are
divided by the capacity Q (RouteFinder's normalised demands); coordinates, times and lengths
stay in instance units (unit square, speed 1, depot closing time 4.6 for the generator's
windows), which are already O(1).

Customer features, `CUSTOMER_FEATURES` = 7 per node [B, N, 7] (row 0, the depot, is built too
but the encoder embeds the depot from `depot_features` instead):
    x, y, linehaul demand d_i / Q, backhaul demand p_i / Q, earliest e_i, latest l_i (0 without
    time windows), service time s_i.
Depot (global) features, `DEPOT_FEATURES` = 5 [B, 1, 5]; the attributes that belong to the
whole instance ride on the depot token, as RouteFinder's "global" features:
    x_0, y_0, depot closing time l_0 (0 without time windows), distance limit L (0 without a
    limit), open-route flag.
Context (state) features, `CONTEXT_FEATURES` = 6 per state row [R, 6], concatenated to the
embedding of the current node to form the decoder query (MVMoE / RouteFinder context):
    remaining linehaul capacity (Q - D) / Q, remaining backhaul capacity (Q - P) / Q, with D
    and P the linehaul delivered and backhaul picked up in the current route; current time t
    (when the vehicle leaves the current node; equals the route length so far without time
    windows); route length so far l; remaining length L - l (0 without a limit); open-route
    flag. The exact legality of every action comes from the env's `action_mask`, not from
    these features.
"""

from __future__ import annotations

import torch
from torch import Tensor

from problems.vrp.env import VRPState
from problems.vrp.instance import VRPBatch

CUSTOMER_FEATURES = 7
DEPOT_FEATURES = 5
CONTEXT_FEATURES = 6


def _finite_or_zero(value: Tensor) -> Tensor:
    """inf (an absent attribute) -> 0, the RouteFinder convention."""
    return torch.nan_to_num(value, posinf=0.0)


def customer_features(batch: VRPBatch) -> Tensor:
    """[B, N, 7] per-node features (see the module docstring)."""
    capacity = batch.capacity[:, None]
    return torch.cat(
        [
            batch.locs,
            (batch.linehaul_demand / capacity)[..., None],
            (batch.backhaul_demand / capacity)[..., None],
            _finite_or_zero(batch.time_windows),
            batch.service_time[..., None],
        ],
        -1,
    )


def depot_features(batch: VRPBatch) -> Tensor:
    """[B, 1, 5] depot / instance-level features (see the module docstring)."""
    return torch.cat(
        [
            batch.locs[:, 0],
            _finite_or_zero(batch.time_windows[:, 0, 1:]),
            _finite_or_zero(batch.distance_limit)[:, None],
            batch.open_route.to(batch.locs.dtype)[:, None],
        ],
        -1,
    )[:, None]


def context_features(state: VRPState) -> Tensor:
    """[R, 6] per-row decoding state (see the module docstring)."""
    rows = state.batch
    capacity = rows.capacity
    remaining_length = _finite_or_zero(rows.distance_limit - state.route_length)
    return torch.stack(
        [
            (capacity - state.linehaul_load) / capacity,
            (capacity - state.backhaul_load) / capacity,
            state.time,
            state.route_length,
            remaining_length,
            rows.open_route.to(state.time.dtype),
        ],
        -1,
    )
