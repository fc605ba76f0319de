"""ProPublica COMPAS two-year recidivism data as a tabular classification task."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from optiforge.datamodules.tensor_classification import TensorClassificationDataModule
from optiforge.problems.data_paths import data_path

CATEGORIES: dict[str, tuple[str, ...]] = {
    "sex": ("Male", "Female"),
    "age_cat": ("Less than 25", "25 - 45", "Greater than 45"),
    "race": ("African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American"),
    "c_charge_degree": ("F", "M"),
}
COUNTS = ("juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count")


def encode_row(row: dict[str, str]) -> list[float]:
    """18 features: scaled age, log1p of the four counts, one-hot sex, age group, race, charge.

    Fixed transforms (no statistics of the data) keep held-out splits free of leakage. `is_recid`
    is left out because it restates the label; `decile_score`/`score_text` (COMPAS's own risk
    score) and `days_b_screening_arrest` (307 blanks) are left out as well.
    """
    features = [(float(row["age"]) - 18.0) / 60.0]
    features += [float(np.log1p(float(row[name]))) for name in COUNTS]
    for column, values in CATEGORIES.items():
        if row[column] not in values:
            raise ValueError(f"compas.csv: column {column!r} has unknown value {row[column]!r}")
        features += [float(row[column] == value) for value in values]
    return features


class CompasDataModule(TensorClassificationDataModule):
    """COMPAS features [n, 18] with label `two_year_recid` (2 classes).

    Args:
        path: the COMPAS CSV; None means `compas/compas.csv` in the data folder
            (see `optiforge.problems.data_paths.data_dir`).
        **split/batch arguments**: those of `TensorClassificationDataModule`.
    """

    def __init__(
        self,
        path: str | None = None,
        batch_size: int = 256,
        eval_batch_size: int = 2048,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        label_noise: float = 0.0,
        seed: int = 0,
        num_workers: int = 0,
        drop_last: bool = False,
    ) -> None:
        path = str(data_path("compas/compas.csv")) if path is None else path
        if not Path(path).is_file():
            raise ValueError(f"data.path: no file at {path!r} (expected the COMPAS compas.csv)")
        super().__init__(
            batch_size,
            eval_batch_size,
            val_fraction,
            test_fraction,
            label_noise,
            seed,
            num_workers,
            drop_last,
        )
        self.path = path

    @property
    def num_classes(self) -> int:
        return 2

    def load_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        with open(self.path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        features = np.array([encode_row(row) for row in rows], dtype=np.float32)
        labels = np.array([int(row["two_year_recid"]) for row in rows], dtype=np.int64)
        return features, labels
