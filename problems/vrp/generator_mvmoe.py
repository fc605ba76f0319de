"""Random VRP instances in MVMoE's convention (RoyalSkye/Routing-MVMoE, `get_random_problems`).

The instances MTL-KD's paper evaluates on; `generate(..., convention="mvmoe")` calls
`mvmoe_batch`. Every constant, in instance units (unit square, speed 1), as in MVMoE's
`envs/<Variant>Env.py`:

- coordinates: depot and customers i.i.d. U[0, 1]^2.
- demands: integers in [1, 9] (`DEMAND_LOW`, `DEMAND_HIGH`), not normalised.
- capacity (MVMoE's `demand_scaler`, `mvmoe_capacity`): 30 / 40 / 50 / 70 at n = 20 / 50 / 100
  / 200 (`CAPACITY`). MVMoE raises for any other n; here n < 20 takes 30, n between defined
  sizes the capacity of the largest defined size below it (n = 60 -> 40, n = 150 -> 50), and
  n > 200 takes 50 (`LARGE_CAPACITY`, MVMoE's n = 100 capacity, the size MTL-KD trains on).
  That rule was measured (`benchmarks/mvmoe_large_rule.py`, PyVRP 100 iterations, 50 instances
  at n = 500, 10 at n = 1000) against the HGS objectives MTL-KD's paper reports: mean CVRP500
  65.97 (paper 62.07, +6.3%), CVRP1000 120.23 (119.54, +0.6%), VRPTW1000 172.65 (166.47,
  +3.7%; the capacity hardly matters there); PyVRP at that budget sits above converged HGS.
  The other candidates miss by far: 70 (largest defined size) 50.69 / 91.26, RouteFinder's
  30 + n // 5 = 130 / 230 33.17 / 40.70, LEHD / BQ's 100 / 250 39.30 / 39.20.
- route-length limit: 3.0 (`ROUTE_LIMIT`) for L variants.
- time windows (MVMoE after "Learning to Delegate"): depot [0, 3] (`DEPOT_CLOSE`), service
  0.2 (`SERVICE`) at every customer; with t_i = d_0i, a_i = t_i, b_i = 3 - t_i - 0.2, centre
  c_i = b_i + (a_i - b_i) u_i, half-width h_i = 1 + (0.1 - 1) u'_i (MVMoE writes
  (0.2 / 2 - 3 / 3) u' + 3 / 3), u, u' ~ U[0, 1]; earliest = clamp(c_i - h_i, 0, 3), latest =
  clamp(c_i + h_i, 0, 3). An instance where some customer has max(t_i, earliest_i) + 0.2 + t_i
  > 3 (out and back misses the depot's closing time) is drawn again, open routes included.
  MVMoE re-draws the whole batch and allows 1e-5 slack; here only the failed instances are
  re-drawn (instances are i.i.d., so each keeps the same distribution: uniform draws
  conditioned on passing), with no slack, because `VRPBatch`'s check requires an exact return
  (the two differ only for returns in (3, 3 + 1e-5]).
- backhauls: exactly floor(0.2 n) (`BACKHAUL_SHARE`) customers per instance are backhaul
  customers, their demand drawn like a linehaul demand. MVMoE takes one random index set per
  batch; with i.i.d. coordinates and demands any fixed index set gives the same per-instance
  distribution, so each instance draws its own set here. `signed_load` is True for every
  instance: backhauls follow MVMoE's signed load rule (`problems/vrp/instance.py`).
- open routes: the return leg costs nothing, as in the RouteFinder convention.

Absent attributes take the neutral values of `VRPBatch` (windows [0, inf), service 0, limit inf).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from optiforge.problems.vrp.instance import VRPBatch

DEMAND_LOW, DEMAND_HIGH = 1, 9
CAPACITY: dict[int, int] = {20: 30, 50: 40, 100: 50, 200: 70}
LARGE_CAPACITY = 50
ROUTE_LIMIT = 3.0
DEPOT_CLOSE = 3.0
SERVICE = 0.2
HALF_WIDTH_MIN, HALF_WIDTH_MAX = SERVICE / 2, DEPOT_CLOSE / 3
BACKHAUL_SHARE = 0.2


def mvmoe_capacity(num_customers: int) -> int:
    """MVMoE's capacity at n = 20/50/100/200; 50 beyond 200; else that of the largest defined
    size below n (30 for n < 20), see the module docstring."""
    if num_customers > max(CAPACITY):
        return LARGE_CAPACITY
    below = [size for size in CAPACITY if size <= num_customers]
    return CAPACITY[max(below)] if below else CAPACITY[min(CAPACITY)]


def mvmoe_windows(depot_dist: Tensor, centre_u: Tensor, width_u: Tensor) -> Tensor:
    """Customer windows [..., 2] (earliest, latest) from d_0i and the draws u, u' (same shape)."""
    early = depot_dist
    late = DEPOT_CLOSE - depot_dist - SERVICE
    centre = late + (early - late) * centre_u
    half = HALF_WIDTH_MAX + (HALF_WIDTH_MIN - HALF_WIDTH_MAX) * width_u
    windows = torch.stack([centre - half, centre + half], -1)
    return windows.clamp(0.0, DEPOT_CLOSE)


def misses_depot_close(depot_dist: Tensor, windows: Tensor) -> Tensor:
    """[B] bool: some customer's out-and-back route ends after the depot closes."""
    back = torch.maximum(depot_dist, windows[..., 0]) + SERVICE + depot_dist
    return (back > DEPOT_CLOSE).any(-1)


def _draw_geometry(b: int, n: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """Coordinates [b, n + 1, 2] and windows [b, n, 2] of b fresh instances."""
    locs = torch.rand(b, n + 1, 2, generator=gen, device=gen.device)
    u = torch.rand(2, b, n, generator=gen, device=gen.device)
    depot_dist = torch.linalg.vector_norm(locs[:, 1:] - locs[:, :1], dim=-1)
    return locs, mvmoe_windows(depot_dist, u[0], u[1])


def _valid_geometry(has_tw: Tensor, n: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """`_draw_geometry` for every instance, re-drawing the TW instances that fail the return
    check until none does (each re-draw fails with the same small probability)."""
    locs, windows = _draw_geometry(has_tw.shape[0], n, gen)
    while True:
        depot_dist = torch.linalg.vector_norm(locs[:, 1:] - locs[:, :1], dim=-1)
        failed = (misses_depot_close(depot_dist, windows) & has_tw).nonzero().squeeze(1)
        if failed.numel() == 0:
            return locs, windows
        locs[failed], windows[failed] = _draw_geometry(failed.numel(), n, gen)


def _backhaul_customers(b: int, n: int, gen: torch.Generator) -> Tensor:
    """[b, n] bool with exactly floor(0.2 n) True per row at uniformly random positions."""
    ranks = torch.rand(b, n, generator=gen, device=gen.device).argsort(1).argsort(1)
    return ranks < n // 5  # n // 5 == floor(0.2 n) exactly, unlike int(n * 0.2) in floats


def mvmoe_batch(
    flags: tuple[Tensor, Tensor, Tensor, Tensor], num_customers: int, gen: torch.Generator
) -> VRPBatch:
    """Instances with the per-instance attribute `flags` (open, backhaul, limit, tw), each [B]
    bool on `gen`'s device, drawn with `gen` in MVMoE's convention (module docstring)."""
    is_open, has_backhaul, has_limit, has_tw = flags
    b, n, dev = is_open.shape[0], num_customers, gen.device
    locs, windows = _valid_geometry(has_tw, n, gen)
    demand = torch.randint(DEMAND_LOW, DEMAND_HIGH + 1, (b, n), generator=gen, device=dev)
    is_backhaul = _backhaul_customers(b, n, gen) & has_backhaul[:, None]
    zero = torch.zeros(b, 1, device=dev)
    linehaul = torch.cat([zero, torch.where(is_backhaul, 0, demand).float()], 1)
    backhaul = torch.cat([zero, torch.where(is_backhaul, demand, 0).float()], 1)
    depot_window = torch.tensor([0.0, DEPOT_CLOSE], device=dev).expand(b, 1, 2)
    windows = torch.cat([depot_window, windows], 1)
    neutral = torch.tensor([0.0, math.inf], device=dev).expand(b, n + 1, 2)
    service = torch.cat([zero, torch.full((b, n), SERVICE, device=dev)], 1)
    return VRPBatch(
        locs=locs,
        linehaul_demand=linehaul,
        backhaul_demand=backhaul,
        capacity=torch.full((b,), float(mvmoe_capacity(n)), device=dev),
        time_windows=torch.where(has_tw[:, None, None], windows, neutral),
        service_time=torch.where(has_tw[:, None], service, 0.0),
        distance_limit=torch.where(has_limit, ROUTE_LIMIT, math.inf),
        open_route=is_open,
        mixed_backhaul=torch.zeros(b, dtype=torch.bool, device=dev),
        signed_load=torch.ones(b, dtype=torch.bool, device=dev),
    )
