"""The one VRPBatch <-> numpy conversion."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.vrp.arrays import FIELDS, batch_arrays, batch_from_arrays, instance_arrays
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.variants import ALL_VARIANTS


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(ALL_VARIANTS)), size=st.integers(1, 8), seed=st.integers(0, 99))
def test_round_trip_keeps_every_field_and_dtype(name: str, size: int, seed: int) -> None:
    """batch -> arrays -> batch gives back equal tensors of the same dtypes, for every variant."""
    batch = generate(name, size, 3, seed=seed)
    back = batch_from_arrays(batch_arrays(batch))
    for field in FIELDS:
        original, restored = getattr(batch, field), getattr(back, field)
        assert restored.dtype == original.dtype and torch.equal(restored, original)


def test_instance_arrays_are_one_row_in_float64() -> None:
    """`instance_arrays(batch, 1)` holds row 1 of every field as float64 (bools as 0 / 1)."""
    batch = generate("OVRPTW", 4, 2, seed=1)
    row = instance_arrays(batch, 1)
    assert set(row) == set(FIELDS)
    assert all(value.dtype == np.float64 for value in row.values())
    np.testing.assert_array_equal(row["locs"], batch.locs[1].double().numpy())
    assert row["open_route"] == 1.0 and row["locs"].shape == (5, 2)


def test_missing_fields_are_named() -> None:
    """Arrays without some VRPBatch fields raise naming them."""
    arrays = batch_arrays(generate("CVRP", 3, 1, seed=0))
    del arrays["capacity"]
    with pytest.raises(ValueError, match=r"\['capacity'\]"):
        batch_from_arrays(arrays)
