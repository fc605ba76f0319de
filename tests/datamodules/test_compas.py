"""COMPAS feature encoding and loading."""

from __future__ import annotations

import pytest

from optiforge.datamodules import CompasDataModule
from optiforge.datamodules.compas import encode_row

ROW = {
    "sex": "Female",
    "age": "48",
    "age_cat": "Greater than 45",
    "race": "Hispanic",
    "juv_fel_count": "0",
    "juv_misd_count": "1",
    "juv_other_count": "0",
    "priors_count": "3",
    "c_charge_degree": "M",
}


def test_encode_row_by_hand() -> None:
    """Age 48 -> 0.5; counts -> log1p; one-hots in the documented order."""
    features = encode_row(ROW)
    assert features[0] == pytest.approx(0.5)
    assert features[1:5] == pytest.approx([0.0, 0.693147, 0.0, 1.386294], abs=1e-6)
    assert features[5:] == [0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1]
    assert len(features) == 18


def test_unknown_category_is_an_error() -> None:
    """A category outside the known list is reported with its column."""
    with pytest.raises(ValueError, match="race"):
        encode_row({**ROW, "race": "Martian"})


def test_loads_the_real_file() -> None:
    """7214 rows, 18 features, 3251 positive labels (as counted in the CSV)."""
    features, labels = CompasDataModule().load_arrays()
    assert features.shape == (7214, 18)
    assert int(labels.sum()) == 3251
