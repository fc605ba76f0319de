"""Seeded, batched generator of random VRP instances in two named conventions.

`convention="routefinder"` (the default) follows RouteFinder / RL4CO, below; `"mvmoe"` follows
MVMoE, the instances MTL-KD's paper evaluates on (constants in `problems/vrp/generator_mvmoe.py`).
Both draw the attribute flags the same way (a name, a list round-robin, or "mixed").

RouteFinder: column B of the benchmark-convention table in the reference notes
(ai4co/routefinder `MTVRPGenerator`), reimplemented here. Every constant, in instance units
(unit square, speed 1):

- coordinates: depot and customers i.i.d. U[0, 1]^2 (`COORD_LOW`, `COORD_HIGH`).
- demands: linehaul and backhaul demand i.i.d. integers in [1, 9] (`DEMAND_LOW`, `DEMAND_HIGH`);
  with backhauls on, each customer is a backhaul customer with probability 0.2
  (`BACKHAUL_PROB`) and then has linehaul demand 0, otherwise backhaul demand 0.
- capacity (`vehicle_capacity`): 30 + floor(n / 5) for 20 < n <= 1000 (50 at n = 100, 130 at
  500, 230 at 1000); 30 for n <= 20 (RouteFinder adds nothing below 21, so 30 is the floor);
  230 + floor((n - 1000) / 33.3) beyond 1000, i.e. +1 per 33.3 customers. Demands are not
  normalised: `capacity` is in demand units.
- time windows (MTPOMO style): depot window [0, 4.6] (`DEPOT_CLOSE`), depot service 0; customer
  service time s_i ~ U[0.15, 0.18] (`SERVICE_LOW`, `SERVICE_HIGH`), window length
  w_i ~ U[0.18, 0.2] (`WINDOW_LOW`, `WINDOW_HIGH`), window start
  e_i = d_0i + u_i * (4.6 - s_i - w_i - 2 d_0i), u_i ~ U[0, 1], and l_i = e_i + w_i.
  This is RouteFinder's e_i = (1 + (h_i - 1) u_i) d_0i with h_i = (4.6 - s_i - w_i) / d_0i - 1,
  written without the division. So e_i >= d_0i (reachable from the depot at time 0) and
  l_i + s_i + d_0i <= 4.6 (even arriving at the window's end, the vehicle gets back before the
  depot closes). The bracket is positive because d_0i <= sqrt(2) and s_i + w_i <= 0.38.
- distance limit (RouteFinder): L ~ U[lo, hi] with lo = 2 max_i d_0i + 1e-6 (`LIMIT_EPS`) and
  hi = max(2.8, lo + 1e-6) (`LIMIT_HIGH`), so every out-and-back route 0 -> i -> 0 has length
  2 d_0i < L and each customer can be served by a route of its own.
- mixed mode ("mixed"): per instance each of O, TW, L, B is on with probability 0.5
  (`MIXED_ATTRIBUTE_PROB`), so a batch covers all 16 variants.

Absent attributes take the neutral values of `VRPBatch` (windows [0, inf), service 0, limit inf).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

from optiforge.problems.vrp.generator_mvmoe import mvmoe_batch
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.variants import ALL_VARIANTS, variant

COORD_LOW, COORD_HIGH = 0.0, 1.0
DEMAND_LOW, DEMAND_HIGH = 1, 9
BACKHAUL_PROB = 0.2
DEPOT_CLOSE = 4.6
SERVICE_LOW, SERVICE_HIGH = 0.15, 0.18
WINDOW_LOW, WINDOW_HIGH = 0.18, 0.2
LIMIT_EPS = 1e-6
LIMIT_HIGH = 2.8
MIXED_ATTRIBUTE_PROB = 0.5
CONVENTIONS: tuple[str, ...] = ("mvmoe", "routefinder")
Convention = Literal["mvmoe", "routefinder"]


def vehicle_capacity(num_customers: int) -> int:
    """Capacity for n customers: 30 + n // 5 on (20, 1000], 30 below, +1 per 33.3 beyond."""
    if num_customers <= 20:
        return 30
    if num_customers <= 1000:
        return 30 + num_customers // 5
    return 230 + math.floor((num_customers - 1000) / 33.3)


def _attribute_flags(
    variants: str | list[str], batch_size: int, gen: torch.Generator
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-instance (open, backhaul, limit, tw) bool flags [B] each.

    A list assigns its variants round-robin (instance b gets variants[b % len]) so that every
    listed variant appears in the batch; "mixed" draws each attribute with probability 0.5.
    """
    if variants == "mixed":
        flags = torch.rand(4, batch_size, generator=gen, device=gen.device) < MIXED_ATTRIBUTE_PROB
        return flags[0], flags[1], flags[2], flags[3]
    names = [variants] if isinstance(variants, str) else list(variants)
    if not names:
        raise ValueError(f"variants must be 'mixed', a name or a list of {sorted(ALL_VARIANTS)}")
    specs = [variant(name) for name in names]
    rows = [specs[b % len(specs)] for b in range(batch_size)]

    def flag(attr: str) -> Tensor:
        return torch.tensor([getattr(v, attr) for v in rows], dtype=torch.bool, device=gen.device)

    return flag("open_route"), flag("backhaul"), flag("distance_limit"), flag("time_windows")


def generate(
    variants: str | list[str],
    num_customers: int,
    batch_size: int,
    seed: int | torch.Generator = 0,
    device: torch.device | str = "cpu",
    mixed_backhaul: bool = False,
    convention: Convention = "routefinder",
) -> VRPBatch:
    """A batch of random instances with `num_customers` customers (N = n + 1 nodes).

    Args:
        variants: a variant name, a list of names (round-robin over the batch) or "mixed".
        num_customers: n >= 1.
        batch_size: B >= 1.
        seed: an int, or a torch.Generator (sampling runs on its device); same seed, same batch.
        device: where the returned tensors live.
        mixed_backhaul: backhaul customers may interleave with linehauls (RouteFinder's
            `backhaul_class` 2); default strict (class 1). RouteFinder convention only.
        convention: "routefinder" or "mvmoe" (module docstring).
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {list(CONVENTIONS)}, got {convention!r}")
    if convention == "mvmoe" and mixed_backhaul:
        raise ValueError(
            "mixed_backhaul must be False with convention 'mvmoe' (its backhauls follow the "
            "signed load rule)"
        )
    if num_customers < 1:
        raise ValueError(f"num_customers must be >= 1, got {num_customers}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    gen = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(seed)
    dev = gen.device
    b, n = batch_size, num_customers
    flags = _attribute_flags(variants, b, gen)
    if convention == "mvmoe":
        return mvmoe_batch(flags, n, gen).to(device)
    is_open, has_backhaul, has_limit, has_tw = flags

    def uniform(low: float, high: float, *shape: int) -> Tensor:
        return low + (high - low) * torch.rand(*shape, generator=gen, device=dev)

    locs = uniform(COORD_LOW, COORD_HIGH, b, n + 1, 2)
    zero = torch.zeros(b, 1, device=dev)
    linehaul = torch.randint(DEMAND_LOW, DEMAND_HIGH + 1, (b, n), generator=gen, device=dev)
    backhaul = torch.randint(DEMAND_LOW, DEMAND_HIGH + 1, (b, n), generator=gen, device=dev)
    is_backhaul = torch.rand(b, n, generator=gen, device=dev) < BACKHAUL_PROB
    is_backhaul &= has_backhaul[:, None]
    linehaul = torch.cat([zero, torch.where(is_backhaul, 0, linehaul).float()], 1)
    backhaul = torch.cat([zero, torch.where(is_backhaul, backhaul, 0).float()], 1)

    depot_dist = torch.linalg.vector_norm(locs[:, 1:] - locs[:, :1], dim=-1)  # [B, n]
    service = uniform(SERVICE_LOW, SERVICE_HIGH, b, n)
    length = uniform(WINDOW_LOW, WINDOW_HIGH, b, n)
    spare = DEPOT_CLOSE - service - length - 2 * depot_dist
    early = depot_dist + torch.rand(b, n, generator=gen, device=dev) * spare
    windows = torch.stack([early, early + length], -1)
    depot_window = torch.tensor([0.0, DEPOT_CLOSE], device=dev).expand(b, 1, 2)
    windows = torch.cat([depot_window, windows], 1)
    neutral = torch.tensor([0.0, math.inf], device=dev).expand(b, n + 1, 2)
    windows = torch.where(has_tw[:, None, None], windows, neutral)
    service = torch.where(has_tw[:, None], torch.cat([zero, service], 1), 0.0)

    low = 2 * depot_dist.max(1).values + LIMIT_EPS
    high = torch.clamp(low + LIMIT_EPS, min=LIMIT_HIGH)
    limit = low + (high - low) * torch.rand(b, generator=gen, device=dev)
    limit = torch.where(has_limit, limit, math.inf)

    batch = VRPBatch(
        locs=locs,
        linehaul_demand=linehaul,
        backhaul_demand=backhaul,
        capacity=torch.full((b,), float(vehicle_capacity(n)), device=dev),
        time_windows=windows,
        service_time=service,
        distance_limit=limit,
        open_route=is_open,
        mixed_backhaul=torch.full((b,), mixed_backhaul, device=dev),
        signed_load=torch.zeros(b, dtype=torch.bool, device=dev),
    )
    return batch.to(device)
