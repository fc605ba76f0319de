"""Variant-aware input features of the MTL-KD policies (RouteFinder / MTPOMO conventions).

One layout serves all 16 variants: an attribute the instance does not have shows up as the
neutral value 0 (RouteFinder replaces inf by 0 before the projection, MTPOMO zeroes absent
attributes), so a CVRP instance and the CVRP part of a VRPTW instance look alike. Demands are
divided by the capacity Q (RouteFinder's normalised demands); coordinates stay in instance units
(the unit square, speed 1). Times and lengths follow the policy's `FeatureScaling`:

- "raw": times and lengths in instance units (RouteFinder's depot closing time 4.6 for the
  generator's windows), already O(1); the layout every shipped weights file was trained with.
- "instance": every time divided by the instance's horizon T and every length by its length
  scale Lambda, so instances of another time-window convention (e.g. MVMoE's horizon 3.0 instead
  of RouteFinder's 4.6) look alike to the policy:
      Lambda = L, the distance limit, when the instance has one; else 2 max_i d_0i, the
               instance's longest out-and-back route (a length every instance has, O(1)).
      T      = l_0, the depot's closing time, when the instance has time windows and l_0 is
               finite; else Lambda (without windows the current time equals the route length
               so far).
  A divisor of 0 (every customer on the depot) is replaced by 1. The raw values of T and L that
  the division erases become presence flags on the depot token.

Customer features, `CUSTOMER_FEATURES` = 7 per node [B, N, 7] (row 0, the depot, is built too
but the encoder embeds the depot from `depot_features` instead):
    x, y, linehaul demand d_i / Q, backhaul demand p_i / Q, earliest e_i, latest l_i (0 without
    time windows), service time s_i; "instance": e_i / T, l_i / T, s_i / T.
Depot (global) features, `DEPOT_FEATURES` = 5 [B, 1, 5]; the attributes that belong to the
whole instance ride on the depot token, as RouteFinder's "global" features:
    x_0, y_0, depot closing time l_0 (0 without time windows), distance limit L (0 without a
    limit), open-route flag; "instance": x_0, y_0, has-time-windows flag (1 / 0), has-limit flag
    (1 / 0), open-route flag.
Context (state) features, `CONTEXT_FEATURES` = 6 per state row [R, 6], concatenated to the
embedding of the current node to form the decoder query (MVMoE / RouteFinder context):
    remaining linehaul capacity (Q - D) / Q, remaining backhaul capacity (Q - P) / Q, with D
    and P the linehaul delivered and backhaul picked up in the current route; current time t
    (when the vehicle leaves the current node; equals the route length so far without time
    windows); route length so far l; remaining length L - l (0 without a limit); open-route
    flag; "instance": t / T, l / Lambda, (L - l) / L = 1 - l / L (0 without a limit).
    The exact legality of every action comes from the env's `action_mask`, not from these
    features.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

from optiforge.problems.vrp.env import VRPState
from optiforge.problems.vrp.instance import VRPBatch

CUSTOMER_FEATURES = 7
DEPOT_FEATURES = 5
CONTEXT_FEATURES = 6

FeatureScaling = Literal["raw", "instance"]
FEATURE_SCALINGS: tuple[str, ...] = ("raw", "instance")


def check_scaling(scaling: str, field: str = "feature_scaling") -> None:
    """Raise naming `field` and the allowed values unless `scaling` is a `FeatureScaling`."""
    if scaling not in FEATURE_SCALINGS:
        raise ValueError(f"{field} must be one of {FEATURE_SCALINGS}, got {scaling!r}")


def _finite_or_zero(value: Tensor) -> Tensor:
    """inf (an absent attribute) -> 0, the RouteFinder convention."""
    return torch.nan_to_num(value, posinf=0.0)


def _positive_or_one(value: Tensor) -> Tensor:
    """A divisor with 0 replaced by 1 (a degenerate instance keeps finite features)."""
    return torch.where(value > 0, value, torch.ones_like(value))


def instance_scales(batch: VRPBatch, depot_dist: Tensor) -> tuple[Tensor, Tensor]:
    """(T, Lambda) [B] of the "instance" scaling (module docstring), with `depot_dist` [B, N]
    the distances from the depot to every node."""
    limit = batch.distance_limit
    length = torch.where(torch.isfinite(limit), limit, 2 * depot_dist.amax(1))
    length = _positive_or_one(length)
    close = batch.time_windows[:, 0, 1]
    has_tw = torch.isfinite(batch.time_windows[:, :, 1]).any(1)
    horizon = torch.where(has_tw & torch.isfinite(close), _positive_or_one(close), length)
    return horizon, length


def _depot_distances(batch: VRPBatch) -> Tensor:
    """[B, N] Euclidean distances from the depot."""
    return torch.linalg.vector_norm(batch.locs - batch.locs[:, :1], dim=-1)


def customer_features(batch: VRPBatch, scaling: FeatureScaling) -> Tensor:
    """[B, N, 7] per-node features (see the module docstring)."""
    capacity = batch.capacity[:, None]
    windows = _finite_or_zero(batch.time_windows)
    service = batch.service_time
    if scaling == "instance":
        horizon = instance_scales(batch, _depot_distances(batch))[0][:, None]
        windows, service = windows / horizon[..., None], service / horizon
    return torch.cat(
        [
            batch.locs,
            (batch.linehaul_demand / capacity)[..., None],
            (batch.backhaul_demand / capacity)[..., None],
            windows,
            service[..., None],
        ],
        -1,
    )


def depot_features(batch: VRPBatch, scaling: FeatureScaling) -> Tensor:
    """[B, 1, 5] depot / instance-level features (see the module docstring)."""
    dtype = batch.locs.dtype
    if scaling == "instance":
        close = torch.isfinite(batch.time_windows[:, :, 1]).any(1).to(dtype)
        limit = torch.isfinite(batch.distance_limit).to(dtype)
    else:
        close = _finite_or_zero(batch.time_windows[:, 0, 1])
        limit = _finite_or_zero(batch.distance_limit)
    return torch.cat(
        [batch.locs[:, 0], close[:, None], limit[:, None], batch.open_route.to(dtype)[:, None]],
        -1,
    )[:, None]


def context_features(state: VRPState, scaling: FeatureScaling) -> Tensor:
    """[R, 6] per-row decoding state (see the module docstring)."""
    rows = state.batch
    capacity = rows.capacity
    time, length = state.time, state.route_length
    remaining_length = _finite_or_zero(rows.distance_limit - length)
    if scaling == "instance":
        horizon, scale = instance_scales(rows, state.dist[:, 0][state.instance])
        time, length = time / horizon, length / scale
        limit = rows.distance_limit
        remaining_length = torch.where(torch.isfinite(limit), 1 - state.route_length / limit, 0.0)
    return torch.stack(
        [
            (capacity - state.linehaul_load) / capacity,
            (capacity - state.backhaul_load) / capacity,
            time,
            length,
            remaining_length,
            rows.open_route.to(state.time.dtype),
        ],
        -1,
    )
