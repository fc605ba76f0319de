"""A family's instances with checked reference solutions, cached as one .npz file.

The cache holds the family's arrays ("family.<field>"), the parameters x, every field of
`ReferenceSolutions` and a JSON "metadata" entry (format version, family, sizes, seeds, solver,
tolerance, starts, instance count). It is written atomically: into a temporary file in the same
folder, flushed to disk, then renamed over the target, so a reader never sees half a file.

`build_dataset` with an existing `cache_path` loads it when its metadata equal the request and
raises ValueError naming every differing field otherwise: a cache is never overwritten or
regenerated behind the caller's back (delete it or pick another path). Loading re-runs the
feasibility check on the stored solutions, so a tampered or corrupted file cannot smuggle an
infeasible point in as accepted.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from optiforge.problems.constrained.family import ConstrainedFamily
from optiforge.problems.constrained.reference_solvers import (
    FEASIBILITY_TOLERANCE,
    ReferenceSolutions,
    check_points,
    default_solver,
    solve_reference,
)
from optiforge.problems.constrained.registry import DEFAULT_SEED, make_family

DATASET_FORMAT_VERSION = 1
FAMILY_PREFIX = "family."
SOLUTION_ARRAYS = ("solutions", "solver_success", "solve_times")


@dataclass(frozen=True, eq=False)
class ConstrainedDataset:
    """A family, its parameters x [N, num_eq] and their checked reference solutions."""

    family: ConstrainedFamily
    parameters: Tensor
    reference: ReferenceSolutions
    metadata: dict[str, object]


def build_dataset(
    name: str,
    num_instances: int,
    *,
    num_vars: int = 100,
    num_eq: int = 50,
    num_ineq: int = 50,
    family_seed: int = DEFAULT_SEED,
    parameter_seed: int = 0,
    solver: str | None = None,
    tolerance: float = FEASIBILITY_TOLERANCE,
    num_starts: int = 1,
    cache_path: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ConstrainedDataset:
    """Draw the family and `num_instances` parameters, solve them, and cache the result.

    With `cache_path` set and the file present, returns the cached dataset if its metadata match
    this request (ValueError otherwise); without the file, builds and writes it. `progress` is
    passed to `solve_reference` (called after each solved instance). The parameters of a
    smaller `num_instances` are the first rows of a larger one's (same stream).
    """
    cache = None if cache_path is None else _npz_path(cache_path)
    family = make_family(name, num_vars, num_eq, num_ineq, family_seed)
    metadata: dict[str, object] = {
        "format_version": DATASET_FORMAT_VERSION,
        "family": name,
        "num_vars": num_vars,
        "num_eq": num_eq,
        "num_ineq": num_ineq,
        "family_seed": family_seed,
        "parameter_seed": parameter_seed,
        "num_instances": num_instances,
        "solver": default_solver(family) if solver is None else solver,
        "tolerance": tolerance,
        "num_starts": num_starts,
    }
    if cache is not None and cache.exists():
        return load_dataset(cache, expected_metadata=metadata)
    parameters = family.sample_parameters(num_instances, parameter_seed)
    reference = solve_reference(
        family,
        parameters,
        str(metadata["solver"]),
        tolerance,
        num_starts,
        seed=parameter_seed,
        progress=progress,
    )
    dataset = ConstrainedDataset(family, parameters, reference, metadata)
    if cache is not None:
        save_dataset(dataset, cache)
    return dataset


def save_dataset(dataset: ConstrainedDataset, path: str | Path) -> None:
    """Write `dataset` to the .npz file `path` atomically (temporary file, then rename)."""
    path = _npz_path(path)
    arrays: dict[str, np.ndarray] = {
        FAMILY_PREFIX + key: value for key, value in dataset.family.arrays().items()
    }
    arrays["parameters"] = dataset.parameters.cpu().numpy()
    for field in fields(dataset.reference):
        arrays[field.name] = np.asarray(getattr(dataset.reference, field.name))
    arrays["metadata"] = np.array(json.dumps(dataset.metadata, sort_keys=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_dataset(
    path: str | Path, expected_metadata: dict[str, object] | None = None
) -> ConstrainedDataset:
    """Read a cache written by `save_dataset`; re-check its solutions against its family.

    With `expected_metadata`, every differing field is named in a ValueError.
    """
    path = _npz_path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            stored = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is not a readable .npz dataset cache: {error}") from error
    missing = {"metadata", "parameters", "solver", "tolerance", *SOLUTION_ARRAYS} - set(stored)
    if missing:
        raise ValueError(f"{path} is not a constrained dataset cache: missing {sorted(missing)}")
    metadata = json.loads(str(stored["metadata"]))
    if expected_metadata is not None:
        _check_metadata(path, metadata, expected_metadata)
    template = make_family(
        metadata["family"],
        metadata["num_vars"],
        metadata["num_eq"],
        metadata["num_ineq"],
        metadata["family_seed"],
    )
    family = template.with_arrays(
        {
            key.removeprefix(FAMILY_PREFIX): value
            for key, value in stored.items()
            if key.startswith(FAMILY_PREFIX)
        }
    )
    parameters = torch.from_numpy(stored["parameters"])
    solutions = stored["solutions"]
    tolerance = float(stored["tolerance"])
    check = check_points(family, parameters, solutions)
    reference = ReferenceSolutions(
        solver=str(stored["solver"]),
        tolerance=tolerance,
        solutions=solutions,
        objectives=check.objectives,
        max_eq_violation=check.max_eq_violation,
        max_ineq_violation=check.max_ineq_violation,
        solver_success=stored["solver_success"],
        feasible=check.feasible(tolerance),
        solve_times=stored["solve_times"],
    )
    return ConstrainedDataset(family, parameters, reference, metadata)


def _npz_path(path: str | Path) -> Path:
    """`path` as a Path; it must end in .npz (numpy would otherwise append it silently)."""
    path = Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"cache_path must end in .npz, got {str(path)!r}")
    return path


def _check_metadata(path: Path, cached: dict[str, object], expected: dict[str, object]) -> None:
    """Raise ValueError listing every field where the cache differs from the request."""
    differences = [
        f"{key}: cached {cached.get(key)!r}, requested {expected.get(key)!r}"
        for key in sorted(set(cached) | set(expected))
        if cached.get(key) != expected.get(key)
    ]
    if differences:
        raise ValueError(
            f"cache {path} was built for another configuration ({'; '.join(differences)}); "
            "delete it or choose another cache_path"
        )
