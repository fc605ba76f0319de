"""MVMoE's published VRP test sets as evaluation batches (RoyalSkye/Routing-MVMoE, `data/`).

MTL-KD evaluates on the test files of MVMoE (ICML 2024): `<dir>/<VARIANT>/<variant><n>_uniform.pkl`
(e.g. `CVRP/cvrp50_uniform.pkl`, 1000 instances), with the results of its baseline solvers
beside them (`optiforge.problems.vrp.mvmoe_solutions`). Files are read with `restricted_pickle` (no
code from them runs). A test file is a list of per-instance tuples of plain lists and floats, in the
order of MVMoE's `envs/<VARIANT>Env.load_dataset`:

    (depot_xy [[x, y]], node_xy [[x, y]] * n, node_demand [n], capacity,
     route_limit            if the variant has L,
     service_time [n], tw_start [n], tw_end [n]   if it has TW)

MVMoE's conventions, kept here: a negative demand is a backhaul (pickup of -demand), a positive
one a linehaul; demands and capacity in the same units; the depot's window is the env's
[`DEPOT_START`, `DEPOT_END`] = [0, 3] with service 0; open routes come from the variant's name
(O prefix), not from the file; backhauls may interleave with linehauls (`mixed_backhaul`) under
MVMoE's signed load rule (`signed_load`, see `optiforge.problems.vrp.instance`). Absent attributes
take `VRPBatch`'s neutral values (windows [0, inf), service 0, limit inf).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from optiforge.problems.vrp.arrays import batch_arrays, batch_from_arrays
from optiforge.problems.vrp.eval_batch import VRPEvalBatch
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.mvmoe_solutions import SolverCosts, brief, solver_costs, solver_files
from optiforge.problems.vrp.restricted_pickle import load_pickle
from optiforge.problems.vrp.variants import Variant, variant

DEPOT_START, DEPOT_END = 0.0, 3.0
BEST = "best"
BASE_FIELDS = ("depot_xy", "node_xy", "node_demand", "capacity")
LIMIT_FIELDS = ("route_limit",)
WINDOW_FIELDS = ("service_time", "tw_start", "tw_end")
TEST_FILE = re.compile(r"[a-z]+\d+_uniform\.pkl")


def file_name(variant_name: str, size: int) -> str:
    """The test file's name: `cvrp50_uniform.pkl` for ("CVRP", 50)."""
    return f"{variant_name.lower()}{size}_uniform.pkl"


def instance_fields(spec: Variant) -> tuple[str, ...]:
    """The fields of one instance tuple of `spec`'s test file, in the file's order."""
    return BASE_FIELDS + LIMIT_FIELDS * spec.distance_limit + WINDOW_FIELDS * spec.time_windows


def instance_path(mvmoe_dir: str | Path, variant_name: str, size: int) -> Path:
    """`<mvmoe_dir>/<VARIANT>/<file>`, or `<mvmoe_dir>/<file>` when the folder holds it
    directly; neither -> one line naming the path and the test files that do exist."""
    variant(variant_name)  # an unknown name lists the 16
    root, name = Path(mvmoe_dir), file_name(variant_name, size)
    for path in (root / variant_name / name, root / name):
        if path.is_file():
            return path
    if not root.is_dir():
        raise ValueError(f"mvmoe_dir: no folder {root}")
    present = sorted(
        p.relative_to(root).as_posix()
        for p in (*root.glob("*_uniform.pkl"), *root.glob("*/*_uniform.pkl"))
        if TEST_FILE.fullmatch(p.name)  # not the result files <solver>_<variant><n>_...
    )
    raise ValueError(
        f"mvmoe_dir: no {root / variant_name / name} (nor {root / name}); test files in "
        f"{root}: {present or 'none'}"
    )


def _field(path: Path, index: int, field: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    """Field `field` of instance `index` as finite float64 numbers of `shape`, or one line."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != shape or not np.isfinite(array).all():
        raise ValueError(
            f"{path}: instance {index}: {field} must be finite numbers of shape {shape}, "
            f"got {brief(value)}"
        )
    return array


def _read_tuples(path: Path, spec: Variant, size: int, count: int | None) -> dict[str, np.ndarray]:
    """The first `count` (None: all) instance tuples of `path` as float64 arrays per field."""
    fields = instance_fields(spec)
    data = load_pickle(path)
    if not isinstance(data, list | tuple) or not data:
        got = "an empty list" if isinstance(data, list | tuple) else type(data).__name__
        raise ValueError(f"{path}: must be a list of instance tuples, got {got}")
    count = len(data) if count is None else count
    if count > len(data):
        raise ValueError(f"count: {count} exceeds the {len(data)} instances in {path}")
    shapes = {"depot_xy": (1, 2), "node_xy": (size, 2), "capacity": (), "route_limit": ()}
    columns: dict[str, list[np.ndarray]] = {field: [] for field in fields}
    for index, entry in enumerate(data[:count]):
        if not isinstance(entry, list | tuple) or len(entry) != len(fields):
            raise ValueError(
                f"{path}: instance {index} must be a tuple of {len(fields)} fields {fields} "
                f"({spec.name}), got {brief(entry)}"
            )
        for field, value in zip(fields, entry, strict=True):
            columns[field].append(_field(path, index, field, value, shapes.get(field, (size,))))
    return {field: np.stack(values) for field, values in columns.items()}


def _batch(path: Path, spec: Variant, raw: dict[str, np.ndarray]) -> VRPBatch:
    """MVMoE's tuples as a float64 `VRPBatch` under MVMoE's conventions (module docstring)."""
    count = raw["capacity"].shape[0]
    zero = np.zeros((count, 1))
    demand = np.concatenate([zero, raw["node_demand"]], 1)
    windows = np.zeros((count, demand.shape[1], 2))
    windows[..., 1] = math.inf
    service = np.zeros_like(demand)
    if spec.time_windows:
        windows[:, 0] = DEPOT_START, DEPOT_END
        windows[:, 1:, 0], windows[:, 1:, 1] = raw["tw_start"], raw["tw_end"]
        service[:, 1:] = raw["service_time"]
    flags = np.ones(count, dtype=bool)
    arrays = {
        "locs": np.concatenate([raw["depot_xy"], raw["node_xy"]], 1),
        "linehaul_demand": np.maximum(demand, 0.0),
        "backhaul_demand": np.maximum(-demand, 0.0),
        "capacity": raw["capacity"],
        "time_windows": windows,
        "service_time": service,
        "distance_limit": raw["route_limit"] if spec.distance_limit else np.full(count, math.inf),
        "open_route": flags if spec.open_route else ~flags,
        "mixed_backhaul": flags,
        "signed_load": flags,
    }
    try:
        return batch_from_arrays(arrays)
    except ValueError as error:  # check_batch: demand above capacity, unreachable window, ...
        raise ValueError(f"{path}: {error}") from None


def as_float32(batch: VRPBatch) -> VRPBatch:
    """`batch` with float32 numbers (what the models and the generator use)."""
    arrays = batch_arrays(batch)
    return batch_from_arrays(
        {name: a.astype(np.float32) if a.dtype.kind == "f" else a for name, a in arrays.items()}
    )


def _check_arguments(size: int, count: int | None) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size: must be an integer >= 1 (customers), got {size!r}")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"count: must be None (all) or an integer >= 1, got {count!r}")


def read_instances(path: Path, variant_name: str, size: int, count: int | None) -> VRPBatch:
    """The first `count` (None: all) instances of test file `path` as a float64 batch."""
    spec = variant(variant_name)
    return _batch(path, spec, _read_tuples(path, spec, size, count))


def _solvers(path: Path, reference: str) -> dict[str, Path]:
    """The result files that `reference` asks for; an unknown one lists the available."""
    found = solver_files(path.parent, path.name)
    if reference == BEST:
        return found
    if reference not in found:
        raise ValueError(
            f"reference: {reference!r} has no result file beside {path}; allowed: {[BEST, *found]}"
        )
    return {reference: found[reference]}


def load_mvmoe_set(
    mvmoe_dir: str | Path,
    variant_name: str,
    size: int,
    count: int | None = None,
    reference: str = BEST,
) -> VRPEvalBatch:
    """The first `count` (None: all) instances of MVMoE's test file for (`variant_name`,
    `size`) with a validated reference cost per instance, named "MVMoE/<VARIANT>/n<size>".

    `reference` "best" takes the lowest validated cost over every result file beside the test
    file; a solver stem ("hgs", "lkh", "or_tools_200s", ...) takes that file's. An instance with
    no valid reference gets NaN (warned per file, and in total). Instances are float32, costs
    float64, scale 1 (MVMoE's coordinates are already in the unit square).
    """
    _check_arguments(size, count)
    path = instance_path(mvmoe_dir, variant_name, size)
    solvers = _solvers(path, reference)
    batch = read_instances(path, variant_name, size, count)
    costs = [solver_costs(stem, file, batch).validated for stem, file in solvers.items()]
    reference_cost = best_costs(costs, batch.batch_size)
    missing = int(np.isnan(reference_cost).sum())
    if missing:
        warnings.warn(
            f"{path}: {missing} of {batch.batch_size} instances have no valid reference "
            f"(NaN, excluded from gaps); result files: {sorted(solvers) or 'none'}",
            stacklevel=2,
        )
    cost = torch.from_numpy(reference_cost)
    return VRPEvalBatch(
        as_float32(batch), cost, torch.ones_like(cost), f"MVMoE/{variant_name}/n{size}"
    )


def best_costs(costs: Sequence[np.ndarray], count: int) -> np.ndarray:
    """Per instance the lowest finite cost over `costs`, NaN where none is finite."""
    stacked = np.stack([*costs, np.full(count, np.nan)])
    finite = np.where(np.isfinite(stacked), stacked, np.inf).min(0)
    return np.where(np.isfinite(finite), finite, np.nan)


def solver_summary(
    mvmoe_dir: str | Path, variant_name: str, size: int, count: int | None = None
) -> list[SolverCosts]:
    """Every result file's validated costs on the test file's first `count` instances (for
    the docs' table: mean reported vs validated cost, valid / rejected / unsolved counts)."""
    _check_arguments(size, count)
    path = instance_path(mvmoe_dir, variant_name, size)
    batch = read_instances(path, variant_name, size, count)
    return [solver_costs(stem, file, batch) for stem, file in _solvers(path, BEST).items()]
