"""`VRPBatch` <-> numpy: the one conversion used by the validator, PyVRP and the npz caches."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

import numpy as np
import torch
from numpy.typing import DTypeLike

from optiforge.problems.vrp.instance import VRPBatch

FIELDS: tuple[str, ...] = tuple(field.name for field in fields(VRPBatch))


def batch_arrays(batch: VRPBatch, dtype: DTypeLike | None = None) -> dict[str, np.ndarray]:
    """Every field of `batch` (on any device) as a numpy array keyed by its name; `dtype` None
    keeps each field's own dtype (float32 / bool), e.g. np.float64 for exact arithmetic."""
    arrays = {name: getattr(batch, name).detach().cpu().numpy() for name in FIELDS}
    if dtype is None:
        return arrays
    return {name: array.astype(dtype) for name, array in arrays.items()}


def instance_arrays(batch: VRPBatch, row: int) -> dict[str, np.ndarray]:
    """Instance `row` of `batch` as float64 arrays keyed by field name (locs [N, 2], demands [N],
    capacity [], ...): picklable, the input of the validator and of PyVRP's model."""
    return {name: array[0] for name, array in batch_arrays(batch.index(row), np.float64).items()}


def batch_from_arrays(arrays: Mapping[str, np.ndarray]) -> VRPBatch:
    """The `VRPBatch` of arrays keyed by field name (as written by `batch_arrays`)."""
    missing = [name for name in FIELDS if name not in arrays]
    if missing:
        raise ValueError(f"arrays are missing the VRPBatch fields {missing}")
    return VRPBatch(**{name: torch.from_numpy(np.asarray(arrays[name])) for name in FIELDS})
