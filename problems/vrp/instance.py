"""A batch of VRP instances as plain tensors; node 0 of every instance is the depot.

Shapes: B instances, N = n + 1 nodes (depot + n customers). Absent attributes take neutral
values so that one layout serves all 16 variants: no backhauls -> backhaul_demand all 0; no
time windows -> windows [0, inf) and service time 0; no route limit -> distance_limit inf;
closed routes -> open_route False. Demands are in the same units as `capacity`.

The validator (float64) accepts `value <= limit + FEASIBILITY_TOLERANCE * max(1, |limit|)`.
The env masks with half that slack (`DECODING_TOLERANCE`): its float32 sums over a route drift
by ~1e-6 relative, and with equal slack a route ending within that drift of the bound passed
the env's mask yet failed the validator (1 in 1000 VRPL and OVRPTW instances at n = 100).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch
from torch import Tensor

from problems.vrp.variants import Variant

FEASIBILITY_TOLERANCE = 1e-5
DECODING_TOLERANCE = FEASIBILITY_TOLERANCE / 2


def slack_limit(limit: Tensor) -> Tensor:
    """`limit` plus the env's decoding tolerance (relative, at least absolute); inf stays inf."""
    return limit + DECODING_TOLERANCE * limit.abs().clamp(min=1.0)


@dataclass(frozen=True)
class VRPBatch:
    """Batched VRP instances (see module docstring for conventions).

    Attributes:
        locs: coordinates [B, N, 2].
        linehaul_demand: delivery demand [B, N] >= 0 (0 at the depot and at backhaul customers).
        backhaul_demand: pickup demand [B, N] >= 0 (0 at the depot and at linehaul customers).
        capacity: vehicle capacity [B] > 0.
        time_windows: (earliest, latest) service start [B, N, 2]; the depot's row is the shift.
        service_time: service duration [B, N] >= 0 (0 at the depot).
        distance_limit: maximum route length [B] > 0, inf when there is no limit.
        open_route: [B] bool, routes end at their last customer (no return cost).
        mixed_backhaul: [B] bool, linehaul and backhaul customers may interleave in a route
            (the vehicle load must then stay within capacity at every point); False = strict.
    """

    locs: Tensor
    linehaul_demand: Tensor
    backhaul_demand: Tensor
    capacity: Tensor
    time_windows: Tensor
    service_time: Tensor
    distance_limit: Tensor
    open_route: Tensor
    mixed_backhaul: Tensor

    @property
    def batch_size(self) -> int:
        return self.locs.shape[0]

    @property
    def num_nodes(self) -> int:
        """N = customers + 1."""
        return self.locs.shape[1]

    def distances(self) -> Tensor:
        """Euclidean distance matrix [B, N, N], computed from coordinate differences (the
        matrix-product shortcut of `cdist` loses ~1e-4 on short arcs)."""
        return torch.cdist(self.locs, self.locs, compute_mode="donot_use_mm_for_euclid_dist")

    def to(self, device: torch.device | str) -> VRPBatch:
        return VRPBatch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def index(self, rows: Tensor | slice | int) -> VRPBatch:
        """Sub-batch of the instances at `rows` (kept batched)."""
        if isinstance(rows, int):
            rows = slice(rows, rows + 1)
        return VRPBatch(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    def variant_of(self, row: int) -> Variant:
        """Attributes instance `row` actually uses."""
        return Variant(
            open_route=bool(self.open_route[row]),
            backhaul=bool((self.backhaul_demand[row] > 0).any()),
            distance_limit=bool(torch.isfinite(self.distance_limit[row])),
            time_windows=bool(torch.isfinite(self.time_windows[row, :, 1]).any()),
        )

    def variant_index(self) -> Tensor:
        """[B] long: position in `variants.ALL_VARIANTS` of the attributes each instance
        actually uses (vectorized `variant_of`; that dict's order is O, B, L, TW as bits)."""
        bits = (
            self.open_route,
            (self.backhaul_demand > 0).any(1),
            torch.isfinite(self.distance_limit),
            torch.isfinite(self.time_windows[:, :, 1]).any(1),
        )
        return sum(bit.long() << (3 - k) for k, bit in enumerate(bits))

    def check(self, name: str = "batch") -> None:
        """Raise `ValueError` naming the instance and field for malformed or hopeless data:
        wrong shapes, NaN, negative values, non-finite coordinates or capacity, demand at the
        depot, a customer with both demands, demand above capacity, a window with earliest >
        latest, or a customer that an out-and-back route cannot serve within its window, the
        depot's closing time (closed routes) or the distance limit. Zero-demand customers are
        allowed. Passing `check()` means every customer fits on a route of its own."""
        b, n = self.batch_size, self.num_nodes
        expected = {
            "locs": (b, n, 2),
            "linehaul_demand": (b, n),
            "backhaul_demand": (b, n),
            "capacity": (b,),
            "time_windows": (b, n, 2),
            "service_time": (b, n),
            "distance_limit": (b,),
            "open_route": (b,),
            "mixed_backhaul": (b,),
        }
        for field, shape in expected.items():
            value = getattr(self, field)
            if tuple(value.shape) != shape:
                raise ValueError(
                    f"{name}: {field} must have shape {shape}, got {tuple(value.shape)}"
                )
            if value.is_floating_point() and torch.isnan(value).any():
                row = int(torch.isnan(value).reshape(b, -1).any(1).nonzero()[0])
                raise ValueError(f"{name}[{row}]: {field} contains NaN")
        for field in (
            "linehaul_demand",
            "backhaul_demand",
            "service_time",
            "capacity",
            "distance_limit",
        ):
            value = getattr(self, field)
            if (value < 0).any():
                row = int((value < 0).reshape(b, -1).any(1).nonzero()[0])
                raise ValueError(f"{name}[{row}]: {field} must be >= 0")
        if not bool((self.capacity > 0).all()) or not math.isfinite(float(self.capacity.max())):
            raise ValueError(f"{name}: capacity must be positive and finite")
        if not bool(torch.isfinite(self.locs).all()):
            row = int((~torch.isfinite(self.locs)).reshape(b, -1).any(1).nonzero()[0])
            raise ValueError(f"{name}[{row}]: locs must be finite")
        depot_demand = (self.linehaul_demand[:, 0] != 0) | (self.backhaul_demand[:, 0] != 0)
        if depot_demand.any():
            row = int(depot_demand.nonzero()[0])
            raise ValueError(f"{name}[{row}]: linehaul_demand/backhaul_demand: depot must be 0")
        inverted = self.time_windows[..., 0] > self.time_windows[..., 1]
        if inverted.any():
            row, node = (int(i) for i in inverted.nonzero()[0])
            raise ValueError(f"{name}[{row}]: time_windows: node {node}: earliest > latest")
        self._check_rows(name)

    def _check_rows(self, name: str) -> None:
        both = (self.linehaul_demand > 0) & (self.backhaul_demand > 0)
        too_big = torch.maximum(self.linehaul_demand, self.backhaul_demand) > self.capacity[:, None]
        start = self.time_windows[:, 0:1, 0]
        direct = torch.linalg.vector_norm(self.locs - self.locs[:, :1], dim=-1)  # [B, N]
        late = start + direct > self.time_windows[:, :, 1]
        round_trip = torch.where(self.open_route[:, None], direct, 2 * direct)
        too_far = round_trip > self.distance_limit[:, None]
        back_late = (
            torch.maximum(start + direct, self.time_windows[:, :, 0]) + self.service_time + direct
            > self.time_windows[:, 0:1, 1]
        ) & ~self.open_route[:, None]
        checks = [
            (both, "linehaul_demand/backhaul_demand", "a customer has both demands"),
            (too_big, "linehaul_demand/backhaul_demand", "demand above capacity"),
            (late, "time_windows", "unreachable within its time window"),
            (back_late, "time_windows", "cannot return to the depot before it closes"),
            (too_far, "distance_limit", "out and back exceeds the distance limit"),
        ]
        for mask, field, reason in checks:
            mask = mask.clone()
            mask[:, 0] = False
            if mask.any():
                row, node = (int(i) for i in mask.nonzero()[0])
                raise ValueError(f"{name}[{row}]: {field}: customer {node}: {reason}")
