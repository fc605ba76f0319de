"""MVMoE's published solver results, each solution checked by our validator.

Beside every test file `<variant><n>_uniform.pkl`, MVMoE publishes the solutions of its
baselines as `<solver>_<variant><n>_uniform.pkl`, e.g. `hgs_cvrp50_uniform.pkl`,
`hgs_pyvrp_...`, `lkh_...`, `or_tools_200s_...`; `<solver>` (the file's stem here) names the
solver and its time budget. A result file is a list with one entry per instance, (cost, route)
or (cost, route, duration): cost a number (None where the solver found nothing), route the node
sequence with 0 (the depot) between routes, e.g. [3, 1, 0, 2] (`baselines/*.py`, `save_dataset`).

A reported cost is never trusted: `solver_costs` recomputes every solution with
`validate_batch`, whatever backhaul rule the validator implements; a solution it rejects, or an
entry without one, is excluded (NaN) and one warning per file says how many and why.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.restricted_pickle import load_pickle
from optiforge.problems.vrp.validator import RouteOrder, validate_batch

# "instance 3: route 1 [4, 2]: capacity: load 12 > 10" or "instance 3: visits: customer ..."
_CONSTRAINT = re.compile(r"instance (\d+): (?:route \d+ \[[^\]]*\]: )?([^:]+):")


@dataclass(frozen=True)
class SolverCosts:
    """One solver file's costs over the instances read.

    Attributes:
        solver: the file's stem, e.g. "hgs" or "or_tools_200s".
        path: the result file.
        reported: the file's own cost field [B], NaN where it has no solution.
        validated: the validator's cost [B], NaN where the solution is missing or infeasible.
        infeasible: number of solutions the validator rejects.
        unsolved: number of entries without a solution.
        reasons: rejected solutions per violated constraint ("capacity", "time window", ...).
    """

    solver: str
    path: Path
    reported: np.ndarray
    validated: np.ndarray
    infeasible: int
    unsolved: int
    reasons: dict[str, int]

    @property
    def valid(self) -> int:
        return int(np.isfinite(self.validated).sum())

    @property
    def reported_mean(self) -> float:
        """Mean of the file's cost field over the entries with a solution (NaN if none)."""
        return finite_mean(self.reported)

    @property
    def validated_mean(self) -> float:
        """Mean validated cost over the solutions the validator accepts (NaN if none)."""
        return finite_mean(self.validated)

    @property
    def max_cost_difference(self) -> float:
        """Largest |reported - validated| over the valid solutions (NaN if there is none)."""
        both = np.isfinite(self.validated)
        if not both.any():
            return float("nan")
        return float(np.abs(self.reported[both] - self.validated[both]).max())


def finite_mean(values: np.ndarray) -> float:
    """Mean of the finite entries of `values`; NaN if there is none."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


def brief(value: object) -> str:
    """`value` on one line, cut at 60 characters (for error messages)."""
    return " ".join(str(value).split())[:60]


def result_suffix(file_name: str) -> str:
    """`_cvrp50_uniform.pkl` for the test file `cvrp50_uniform.pkl`: how its results end."""
    return f"_{file_name}"


def solver_files(folder: Path, file_name: str) -> dict[str, Path]:
    """The result files beside the test file `file_name` in `folder`, by solver stem."""
    suffix = result_suffix(file_name)
    found = sorted(folder.glob(f"*{suffix}"))
    return {path.name.removesuffix(suffix): path for path in found if path.is_file()}


def _number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _route(path: Path, index: int, value: object, num_nodes: int) -> list[int]:
    """The node sequence of entry `index`, checked to be integers (range is the validator's)."""
    if isinstance(value, list | tuple | np.ndarray):
        nodes = value.reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        if all(isinstance(node, int | np.integer) and not isinstance(node, bool) for node in nodes):
            return [int(node) for node in nodes]
    raise ValueError(
        f"{path}: entry {index}: route must be a list of node indices (0 = depot, customers "
        f"1..{num_nodes - 1}), got {brief(value)}"
    )


def _entries(path: Path, num_instances: int, num_nodes: int) -> tuple[np.ndarray, list]:
    """(reported costs [B] with NaN where unsolved, routes) of the first `num_instances`
    entries of result file `path`; a malformed file raises one line naming entry and field."""
    data = load_pickle(path)
    if not isinstance(data, list | tuple) or len(data) < num_instances:
        size = f"{len(data)} entries" if isinstance(data, list | tuple) else type(data).__name__
        raise ValueError(
            f"{path}: must be a list of (cost, route) for each of the {num_instances} "
            f"instances read, got {size}"
        )
    reported = np.full(num_instances, np.nan)
    routes: list[list[int] | None] = []
    for index, entry in enumerate(data[:num_instances]):
        if not isinstance(entry, list | tuple) or len(entry) not in (2, 3):
            raise ValueError(
                f"{path}: entry {index} must be (cost, route) or (cost, route, duration), "
                f"got {brief(entry)}"
            )
        cost, route = entry[0], entry[1]
        if cost is None:
            routes.append(None)
            continue
        if not _number(cost) or not np.isfinite(cost):
            raise ValueError(f"{path}: entry {index}: cost must be a finite number, got {cost!r}")
        reported[index] = float(cost)
        routes.append(_route(path, index, route, num_nodes))
    return reported, routes


def solver_costs(
    solver: str, path: Path, batch: VRPBatch, route_order: RouteOrder = "as_given"
) -> SolverCosts:
    """The costs of result file `path` on `batch` (its first B entries), validated; signed
    routes judged in the file's order, as MVMoE's env drives them (`route_order`, see
    `validate`).

    Warns once if solutions are excluded, with their number per reason.
    """
    reported, routes = _entries(path, batch.batch_size, batch.num_nodes)
    unsolved = {row for row, route in enumerate(routes) if route is None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        validated = validate_batch(
            batch,
            [route or [] for route in routes],
            on_infeasible="warn",
            solver=solver,
            route_order=route_order,
        )
    reasons: Counter[str] = Counter()
    example = ""
    for warning in caught:
        message = str(warning.message)
        match = _CONSTRAINT.search(message)
        if match is None:  # not the validator's per-instance warning: pass it on
            warnings.warn_explicit(warning.message, warning.category, warning.filename, 0)
        elif int(match.group(1)) not in unsolved:
            reasons[match.group(2)] += 1
            example = example or message.removeprefix(f"{solver}: ")
    validated[sorted(unsolved)] = np.nan
    infeasible = sum(reasons.values())
    if infeasible or unsolved:
        why = ", ".join(f"{name} {count}" for name, count in reasons.most_common())
        warnings.warn(
            f"{path.name}: {infeasible + len(unsolved)} of {batch.batch_size} solutions excluded: "
            f"{infeasible} rejected by the validator ({why or 'none'}), {len(unsolved)} "
            f"without a solution" + (f"; first: {example}" if example else ""),
            stacklevel=2,
        )
    return SolverCosts(solver, path, reported, validated, infeasible, len(unsolved), dict(reasons))
