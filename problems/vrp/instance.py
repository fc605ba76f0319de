"""A batch of VRP instances as plain tensors; node 0 of every instance is the depot.

Shapes: B instances, N = n + 1 nodes (depot + n customers). Absent attributes take neutral
values so that one layout serves all 16 variants: no backhauls -> backhaul_demand all 0; no
time windows -> windows [0, inf) and service time 0; no route limit -> distance_limit inf;
closed routes -> open_route False. Demands are in the same units as `capacity`.

Every batch is checked when it is built (`check_batch`: shapes, NaN, negative values, demand
above capacity, customers no route can serve); the file loaders, the env's `reset` and the
validator run the same check, so malformed input stops with one ValueError naming the instance
and the field instead of surfacing later as an infeasible solution or a dead end in the mask.

Backhaul load rules (per instance): strict (`mixed_backhaul` False): linehauls first in every
route, linehaul and backhaul loads each <= Q; mixed (`mixed_backhaul` True): the vehicle leaves
with the route's linehaul total and the running load stays <= Q; signed (`signed_load` True,
MVMoE's rule; `mixed_backhaul` is then irrelevant and linehauls and backhauls interleave freely
under this rule alone). Signed: demands are signed (linehaul +q, backhaul -p); a vehicle's
remaining capacity L starts at Q when it leaves the depot while some linehaul customer is
unserved, else at 0; serving a customer does L -= signed demand; feasible iff 0 <= L <= Q after
every customer (a linehaul q needs q <= L, a backhaul p needs L + p <= Q). On one route: a
route with a linehaul customer needs 0 <= D_k - P_k <= Q for every prefix k (D_k linehaul
delivered, P_k backhaul picked up so far); a pure-backhaul route needs P <= Q and can only be
driven once no linehaul is left. MVMoE's env drives the routes in the order given, and so does
the validator by default (`route_order="as_given"`); the env masks per route (routes may be
built or replayed in any order), and solutions are put into MVMoE's order before they are
returned (`route_order.py`: backhaul-only routes last; some order passes iff every route passes
on its own). PyVRP cannot express the rule (`pyvrp_solver.py`, `signed_search.py`).

The validator (float64) accepts `value <= limit + FEASIBILITY_TOLERANCE * max(1, |limit|)`,
except for the distance limit, where the slack is `FEASIBILITY_TOLERANCE` absolute (MVMoE's
`round_error_epsilon`: a route of length 3.0000147 fails at L = 3).
The env masks with half that slack (`DECODING_TOLERANCE`): its float32 sums over a route drift
by ~1e-6 relative, and with equal slack a route ending within that drift of the bound passed
the env's mask yet failed the validator (1 in 1000 VRPL and OVRPTW instances at n = 100).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, fields

import numpy as np
import torch
from torch import Tensor

from optiforge.problems.vrp.variants import Variant

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
        signed_load: [B] bool, MVMoE's signed load rule for backhauls (module docstring);
            where True, `mixed_backhaul` is irrelevant: linehaul and backhaul customers
            interleave freely, subject to the signed rule only.
        name: (init only) how errors name the data, e.g. a file; see `check_batch`.
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
    signed_load: Tensor
    name: InitVar[str | None] = None

    def __post_init__(self, name: str | None) -> None:
        """Every batch is checked when it is built (`check_batch`); `name` labels the errors."""
        check_batch(self, name)

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

    def check(self, name: str | None = None) -> None:
        """Re-run `check_batch` (construction already did), e.g. after an in-place edit."""
        check_batch(self, name)


SHAPES: dict[str, tuple[str, ...]] = {
    "locs": ("B", "N", "2"),
    "linehaul_demand": ("B", "N"),
    "backhaul_demand": ("B", "N"),
    "capacity": ("B",),
    "time_windows": ("B", "N", "2"),
    "service_time": ("B", "N"),
    "distance_limit": ("B",),
    "open_route": ("B",),
    "mixed_backhaul": ("B",),
    "signed_load": ("B",),
}
FLAGS: tuple[str, ...] = ("open_route", "mixed_backhaul", "signed_load")


def check_batch(batch: VRPBatch, name: str | None = None) -> None:
    """Raise one `ValueError` naming the instance and field for malformed or hopeless data.

    The one input check of every entry point (construction, file loaders, env reset, validator),
    vectorized over instances: shapes, NaN, infinities where only a limit may be inf, negative
    values, demand at the depot, a customer with both demands, demand above capacity, a window
    with earliest > latest, or a customer that an out-and-back route cannot serve within its
    window, the depot's closing time (closed routes) or the distance limit. Zero-demand customers
    are allowed. Passing means every customer fits on a route of its own (the env relies on it).
    Errors name instance b as `name` for a one-instance batch, `name[b]` otherwise, and
    `instance b` without a name.
    """
    _check_shapes(batch, "batch" if name is None else name)

    def label(row: int) -> str:
        if name is None:
            return f"instance {row}"
        return name if batch.batch_size == 1 else f"{name}[{row}]"

    problems = _field_problems(batch)  # one device sync per list: .any() of every mask at once
    for (field, bad, reason), failed in zip(problems, _any(problems), strict=True):
        if failed:
            row = int(bad.reshape(batch.batch_size, -1).any(1).nonzero()[0])
            raise ValueError(f"{label(row)}: {field} {reason}")
    customers = _customer_problems(batch)  # the depot never fails these
    for (field, bad, reason), failed in zip(customers, _any(customers), strict=True):
        if failed:
            row, node = (int(i) for i in bad.nonzero()[0])
            raise ValueError(f"{label(row)}: {field}: {reason(row, node)}")


def _any(problems: list[tuple[str, Tensor, object]]) -> list[bool]:
    """Whether each problem's mask has a True entry, read from the device in one go."""
    return torch.stack([bad.any() for _, bad, _ in problems]).tolist()


def check_instance(instance: VRPBatch | Mapping[str, object], name: str = "instance") -> None:
    """`check_batch` on the validator's input, labelled `name`: a one-row `VRPBatch`, or a
    mapping from the field names to one instance's arrays (flags as bool or 0/1)."""
    if isinstance(instance, VRPBatch):
        check_batch(instance, name)
        return
    missing = [field for field in SHAPES if field not in instance]
    if missing:
        raise ValueError(f"{name}: missing fields {missing}")
    rows = {field: torch.as_tensor(np.asarray(instance[field]))[None] for field in SHAPES}
    for field, value in rows.items():
        flag = field in FLAGS
        rows[field] = value != 0 if flag else value.to(torch.float64)
    VRPBatch(**rows, name=name)


def _check_shapes(batch: VRPBatch, name: str) -> None:
    """Every field [B, ...] with B and N = nodes taken from `locs` [B, N, 2]; N >= 2."""
    if batch.locs.dim() != 3 or batch.locs.shape[1] < 2 or batch.locs.shape[2] != 2:
        raise ValueError(
            f"{name}: locs must have shape [B, N, 2] with N >= 2 nodes, got "
            f"{list(batch.locs.shape)}"
        )
    sizes = {"B": batch.batch_size, "N": batch.num_nodes, "2": 2}
    for field, dims in SHAPES.items():
        value = getattr(batch, field)
        shape = tuple(sizes[d] for d in dims)
        if tuple(value.shape) != shape:
            raise ValueError(
                f"{name}: {field} must have shape {shape} ({', '.join(dims)}), "
                f"got {tuple(value.shape)}"
            )
        flag = field in FLAGS
        if (value.dtype == torch.bool) if flag else value.is_floating_point():
            continue
        kind = "bool" if flag else "floating point"
        raise ValueError(f"{name}: {field} must be {kind}, got {value.dtype}")


def _field_problems(batch: VRPBatch) -> list[tuple[str, Tensor, str]]:
    """(field, bad [B, ...] mask, reason) for checks that need no other field, in order."""
    floats = [field for field in SHAPES if getattr(batch, field).is_floating_point()]
    problems = [(field, torch.isnan(getattr(batch, field)), "contains NaN") for field in floats]
    for field in ("linehaul_demand", "backhaul_demand", "service_time", "capacity"):
        value = getattr(batch, field)
        problems.append((field, value < 0, "must be >= 0"))
        problems.append((field, torch.isinf(value), "must be finite"))
    depot = (batch.linehaul_demand[:, 0] != 0) | (batch.backhaul_demand[:, 0] != 0)
    return [
        *problems,
        ("capacity", batch.capacity == 0, "must be > 0"),
        ("distance_limit", batch.distance_limit <= 0, "must be > 0 (inf = no limit)"),
        ("locs", torch.isinf(batch.locs), "must be finite"),
        ("time_windows", torch.isinf(batch.time_windows[..., 0]), "earliest must be finite"),
        ("linehaul_demand/backhaul_demand", depot, "of the depot must be 0"),
    ]


def _customer_problems(batch: VRPBatch) -> list[tuple[str, Tensor, Callable[[int, int], str]]]:
    """(field, bad [B, N] mask, reason(row, node)) for customers no route could serve; windows
    first (all nodes), so the depot's row can fail none of the later ones."""
    linehaul, backhaul, capacity = batch.linehaul_demand, batch.backhaul_demand, batch.capacity
    windows, service = batch.time_windows, batch.service_time
    start = windows[:, 0:1, 0]
    direct = torch.linalg.vector_norm(batch.locs - batch.locs[:, :1], dim=-1)  # [B, N]
    round_trip = torch.where(batch.open_route[:, None], direct, 2 * direct)
    back = torch.maximum(start + direct, windows[:, :, 0]) + service + direct
    closed = ~batch.open_route[:, None]

    def over(demand: Tensor) -> Callable[[int, int], str]:
        return lambda row, node: (
            f"demand {float(demand[row, node]):g} of customer {node} exceeds capacity "
            f"{float(capacity[row]):g}"
        )

    def window(row: int, node: int) -> str:
        early, late = (float(t) for t in windows[row, node])
        return f"node {node}: earliest > latest ({early:g} > {late:g})"

    return [
        ("time_windows", windows[..., 0] > windows[..., 1], window),
        (
            "linehaul_demand/backhaul_demand",
            (linehaul > 0) & (backhaul > 0),
            lambda row, node: f"customer {node}: a customer has both demands",
        ),
        ("linehaul_demand", linehaul > capacity[:, None], over(linehaul)),
        ("backhaul_demand", backhaul > capacity[:, None], over(backhaul)),
        (
            "time_windows",
            start + direct > windows[:, :, 1],
            lambda row, node: f"customer {node}: unreachable within its time window",
        ),
        (
            "time_windows",
            (back > windows[:, 0:1, 1]) & closed,
            lambda row, node: f"customer {node}: cannot return to the depot before it closes",
        ),
        (
            "distance_limit",
            round_trip > batch.distance_limit[:, None],
            lambda row, node: f"customer {node}: out and back exceeds the distance limit",
        ),
    ]
