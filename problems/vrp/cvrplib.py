"""The real benchmarks in `data/vrplib/`: CVRP Set X, large VRPB, Gehring-Homberger VRPTW.

Parsed with PyPI `vrplib`. A `BenchmarkInstance` keeps the raw data (instance units) and the
best-known solution (BKS) of its `.sol` file. Two views of it:

* instance units, for reporting: `route_cost` applies the benchmark's rounding convention per
  arc (CVRP, VRPB: `EDGE_WEIGHT_TYPE: EUC_2D` -> nearest integer; VRPTW: DIMACS, truncated to one
  decimal), so its costs compare with the BKS; `gap_to_bks` gives the gap in percent.
* model units, for the network: `to_batch` returns a `VRPBatch` of one instance. Coordinates are
  shifted by the bounding box's lower-left corner and divided by its longer side,
  `scale = max(x_max - x_min, y_max - y_min)`, so they lie in [0, 1] and distances shrink by
  exactly `scale` (unrounded). Time windows and service times are divided by the same `scale`
  (travel time = distance). Demands and capacity stay in the file's integer demand units, as
  in `optiforge.problems.vrp.generator` (the model sees demand / capacity).

Caveat for VRPTW: the Gehring-Homberger BKS are feasible under DIMACS truncation only; with
exact (unrounded) distances some of their routes reach a window up to ~0.1 per arc too late
(e.g. R1_10_1), so the model-unit instance need not accept them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import vrplib

from optiforge.problems.data_paths import data_path
from optiforge.problems.vrp.instance import VRPBatch

BENCHMARKS: tuple[str, ...] = ("CVRP", "VRPB", "VRPTW")


@dataclass(frozen=True)
class BenchmarkInstance:
    """One benchmark instance in its own units; node 0 is the depot.

    Attributes:
        name: instance name, e.g. "X-n101-k25".
        benchmark: "CVRP", "VRPB" or "VRPTW" (also the variant name).
        coords: raw coordinates [N, 2].
        linehaul_demand: delivery demand [N] (0 at the depot and backhaul customers).
        backhaul_demand: pickup demand [N] (all 0 unless VRPB).
        capacity: vehicle capacity.
        time_windows: [N, 2] earliest/latest service start; [0, inf) unless VRPTW.
        service_time: [N] service durations; 0 at the depot and unless VRPTW.
        num_vehicles: fleet size stated in the file, None if unlimited.
        bks_cost: cost of the best-known solution as written in the `.sol` file.
        bks_routes: the BKS routes, lists of customer node indices (depot omitted).
    """

    name: str
    benchmark: str
    coords: np.ndarray
    linehaul_demand: np.ndarray
    backhaul_demand: np.ndarray
    capacity: int
    time_windows: np.ndarray
    service_time: np.ndarray
    num_vehicles: int | None
    bks_cost: float
    bks_routes: list[list[int]]

    @property
    def num_customers(self) -> int:
        return len(self.coords) - 1

    @property
    def scale(self) -> float:
        """Longer side of the coordinates' bounding box: instance units per model unit."""
        extent = self.coords.max(axis=0) - self.coords.min(axis=0)
        return float(extent.max())


def benchmark_dir(benchmark: str, data_dir: str | Path | None = None) -> Path:
    """Folder of `benchmark` ("CVRP", "VRPB", "VRPTW") under `data_dir` (default: the shared
    `vrplib/` folder); raises if the benchmark name is unknown or the folder is missing."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {list(BENCHMARKS)}, got {benchmark!r}")
    root = data_path("vrplib") if data_dir is None else Path(data_dir)
    folder = root / benchmark
    if not folder.is_dir():
        raise FileNotFoundError(f"data_dir: no folder {str(folder)!r} for benchmark {benchmark}")
    return folder


def instance_names(benchmark: str, data_dir: str | Path | None = None) -> list[str]:
    """Sorted names of the instances of `benchmark` that have both a `.vrp` and a `.sol` file."""
    folder = benchmark_dir(benchmark, data_dir)
    return sorted(p.stem for p in folder.glob("*.vrp") if p.with_suffix(".sol").is_file())


def load_instance(
    benchmark: str, name: str, data_dir: str | Path | None = None
) -> BenchmarkInstance:
    """Read `<benchmark>/<name>.vrp` and its `.sol` file into a `BenchmarkInstance`.

    A truncated or corrupted file raises one `ValueError` naming the file and the section (e.g.
    "X-n101-k25.vrp: NODE_COORD_SECTION has 57 lines, DIMENSION says 101"); the instance then
    passes `VRPBatch`'s check (`to_batch`), so NaN or a demand above capacity stops here too.
    """
    folder = benchmark_dir(benchmark, data_dir)
    path = folder / f"{name}.vrp"
    for file in (path, path.with_suffix(".sol")):
        if not file.is_file():
            raise FileNotFoundError(f"name: no file {str(file)!r} for {benchmark} instance {name}")
    raw = _parsed(path, lambda: vrplib.read_instance(path, compute_edge_weights=False))
    file = path.name
    num_nodes = _integer(raw, "DIMENSION", file, minimum=2)
    if raw.get("edge_weight_type") != "EUC_2D":
        raise ValueError(f"{file}: EDGE_WEIGHT_TYPE must be EUC_2D")
    coords = _section(raw, "NODE_COORD_SECTION", file, (num_nodes, 2))
    linehaul = _section(raw, "DEMAND_SECTION", file, (num_nodes,))
    backhaul = np.zeros(num_nodes)
    if benchmark == "VRPB":
        backhaul = _section(raw, "BACKHAUL_SECTION", file, (num_nodes,))
    windows = np.tile(np.array([0.0, math.inf]), (num_nodes, 1))
    service = np.zeros(num_nodes)
    if benchmark == "VRPTW":
        windows = _section(raw, "TIME_WINDOW_SECTION", file, (num_nodes, 2))
        service = np.full(num_nodes, float(_number(raw, "SERVICE_TIME", file, minimum=0)))
        service[0] = 0.0
    if _section(raw, "DEPOT_SECTION", file, None).tolist() != [0]:
        raise ValueError(f"{file}: DEPOT_SECTION must list node 1 as the only depot")
    vehicles = None if "vehicles" not in raw else _integer(raw, "VEHICLES", file, minimum=1)
    solution = _parsed(
        path.with_suffix(".sol"), lambda: vrplib.read_solution(path.with_suffix(".sol"))
    )
    instance = BenchmarkInstance(
        name=name,
        benchmark=benchmark,
        coords=coords,
        linehaul_demand=_demand(linehaul, "DEMAND_SECTION", file),
        backhaul_demand=_demand(backhaul, "BACKHAUL_SECTION", file),
        capacity=_integer(raw, "CAPACITY", file, minimum=1),
        time_windows=windows,
        service_time=service,
        num_vehicles=vehicles,
        bks_cost=_bks_cost(solution, path.with_suffix(".sol").name),
        bks_routes=_bks_routes(solution, num_nodes, path.with_suffix(".sol").name),
    )
    if not instance.scale > 0:
        raise ValueError(f"{file}: NODE_COORD_SECTION puts every node at one point")
    to_batch(instance)
    return instance


def _parsed(path: Path, read: Callable[[], dict]) -> dict:
    """`read()` (a `vrplib` reader of `path`); whatever it raises on a malformed file (its
    parser raises many types) becomes one ValueError naming the file."""
    try:
        return read()
    except Exception as error:
        raise ValueError(f"{path.name}: not a readable VRPLIB file: {error}") from None


def _integer(raw: dict, key: str, file: str, minimum: int) -> int:
    """The specification `key` (e.g. "DIMENSION") as an integer >= `minimum`."""
    value = _number(raw, key, file, minimum)
    if value != int(value):
        raise ValueError(f"{file}: {key} must be an integer, got {value!r}")
    return int(value)


def _number(raw: dict, key: str, file: str, minimum: float) -> float:
    """The specification `key` (e.g. "SERVICE_TIME") as a finite number >= `minimum`."""
    if key.lower() not in raw:
        raise ValueError(f"{file}: {key} is missing")
    value = raw[key.lower()]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{file}: {key} must be a finite number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{file}: {key} must be >= {minimum}, got {value!r}")
    return value


def _section(raw: dict, key: str, file: str, shape: tuple[int, ...] | None) -> np.ndarray:
    """The data section `key` as finite float64 numbers of `shape` (the node index column
    already dropped by `vrplib`); None = any length."""
    if key.removesuffix("_SECTION").lower() not in raw:
        raise ValueError(f"{file}: {key} is missing")
    try:
        values = np.asarray(raw[key.removesuffix("_SECTION").lower()], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{file}: {key} has lines that are not rows of numbers") from None
    if shape is not None and values.shape != shape:
        lines, columns = (values.shape + (1,))[:2] if values.ndim else (0, 0)
        if lines != shape[0]:
            raise ValueError(f"{file}: {key} has {lines} lines, DIMENSION says {shape[0]}")
        wanted = shape[1] if len(shape) > 1 else 1
        raise ValueError(f"{file}: {key} lines must hold {wanted} numbers, got {columns}")
    if not np.isfinite(values).all():
        node = int(np.argwhere(~np.isfinite(values))[0, 0]) + 1
        raise ValueError(f"{file}: {key}: node {node} has a value that is not a finite number")
    return values


def _demand(values: np.ndarray, key: str, file: str) -> np.ndarray:
    """Demands as int64; a fractional demand raises (it would be truncated)."""
    if (values != np.round(values)).any():
        node = int(np.argwhere(values != np.round(values))[0, 0]) + 1
        raise ValueError(f"{file}: {key}: node {node} has a demand that is not an integer")
    return values.astype(np.int64)


def _bks_cost(solution: dict, file: str) -> float:
    """The `Cost` line of a `.sol` file: a positive finite number."""
    cost = solution.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 < cost < math.inf:
        raise ValueError(f"{file}: Cost must be a positive number, got {cost!r}")
    return float(cost)


def _bks_routes(solution: dict, num_nodes: int, file: str) -> list[list[int]]:
    """The routes of a `.sol` file; together they must visit customers 1..N-1 exactly once."""
    try:
        routes = [[int(node) for node in route] for route in solution.get("routes", [])]
    except (TypeError, ValueError):
        raise ValueError(f"{file}: routes must be lists of customer numbers") from None
    visited = sorted(node for route in routes for node in route)
    if visited != list(range(1, num_nodes)):
        raise ValueError(f"{file}: routes must visit customers 1..{num_nodes - 1} exactly once")
    return routes


def distance_matrix(instance: BenchmarkInstance) -> np.ndarray:
    """[N, N] arc lengths in instance units with the benchmark's rounding convention.

    CVRP/VRPB: nearest integer (VRPLIB nint, halves rounded up). VRPTW: truncated to one
    decimal (DIMACS); the values are multiples of 0.1 up to float representation.
    """
    diff = instance.coords[:, None, :] - instance.coords[None, :, :]
    exact = np.sqrt((diff**2).sum(-1))
    if instance.benchmark == "VRPTW":
        return np.floor(exact * 10.0 + 1e-9) / 10.0
    return np.floor(exact + 0.5)


def route_cost(instance: BenchmarkInstance, routes: list[list[int]]) -> float:
    """Total length of closed `routes` (customer lists, depot omitted) in instance units.

    Every customer must be visited exactly once; feasibility otherwise is the validator's job.
    VRPTW costs are summed in tenths and returned rounded to one decimal, like the `.sol` files.
    """
    visited = sorted(node for route in routes for node in route)
    if visited != list(range(1, instance.num_customers + 1)):
        raise ValueError(f"{instance.name}: routes must visit customers 1..n exactly once")
    lengths = distance_matrix(instance)
    total = 0.0
    for route in routes:
        path = [0, *route, 0]
        total += float(lengths[path[:-1], path[1:]].sum())
    if instance.benchmark == "VRPTW":
        return round(total, 1)
    return total


def gap_to_bks(cost: float, bks: float) -> float:
    """Gap of `cost` above the best-known cost `bks`, in percent."""
    if not bks > 0:
        raise ValueError(f"bks must be > 0, got {bks}")
    return 100.0 * (cost - bks) / bks


def to_batch(instance: BenchmarkInstance) -> VRPBatch:
    """The instance in model units (see module docstring) as a `VRPBatch` of size 1."""
    scale = instance.scale
    locs = (instance.coords - instance.coords.min(axis=0)) / scale
    batch = VRPBatch(
        name=f"{instance.name}.vrp",
        locs=_row(locs),
        linehaul_demand=_row(instance.linehaul_demand),
        backhaul_demand=_row(instance.backhaul_demand),
        capacity=torch.full((1,), float(instance.capacity)),
        time_windows=_row(instance.time_windows / scale),
        service_time=_row(instance.service_time / scale),
        distance_limit=torch.full((1,), math.inf),
        open_route=torch.zeros(1, dtype=torch.bool),
        mixed_backhaul=torch.zeros(1, dtype=torch.bool),
        signed_load=torch.zeros(1, dtype=torch.bool),
    )
    return batch


def _row(array: np.ndarray) -> torch.Tensor:
    """A float32 tensor with a leading batch dimension of 1."""
    return torch.as_tensor(np.asarray(array), dtype=torch.float32)[None]


def bks_sequence(instance: BenchmarkInstance) -> np.ndarray:
    """The BKS routes as one node sequence with 0 between routes, e.g. [0, 3, 5, 0, 2, 1, 0]."""
    nodes = [0]
    for route in instance.bks_routes:
        nodes += [*route, 0]
    return np.asarray(nodes, dtype=np.int64)
