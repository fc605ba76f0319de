"""scikit-learn's bundled 8x8 handwritten digits (1797 real images, no download)."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

from optiforge.datamodules.tensor_classification import TensorClassificationDataModule


class DigitsDataModule(TensorClassificationDataModule):
    """UCI optical digits as images [n, 1, 8, 8] scaled to [0, 1], ten classes.

    All split, noise and batching arguments are those of `TensorClassificationDataModule`.
    """

    @property
    def num_classes(self) -> int:
        return 10

    def load_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        digits = load_digits()
        images = digits.images.astype(np.float32)[:, None] / 16.0
        return images, digits.target.astype(np.int64)
