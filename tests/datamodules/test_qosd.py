"""QoSDDataModule: labels only the evaluated instances, with progress lines."""

from __future__ import annotations

import lightning as L
import numpy as np
import pytest

from optiforge.datamodules.qosd import QoSDDataModule

TINY = {"num_nodes": 30, "edge_probability": 0.15, "train_size": 4, "val_size": 2}


def test_test_split_follows_limit_test_batches_with_progress(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """limit_test_batches=1 with batches of 2 of 6 test instances: 2 labelled (the first 2
    of the full split), with a start and an end progress line."""
    limited = QoSDDataModule(**TINY, test_size=6, batch_size=2)
    limited.trainer = L.Trainer(logger=False, limit_test_batches=1)
    limited.setup("test")
    assert len(limited.graphs["test"]) == 2
    err = capfd.readouterr().err
    assert "test: solving references for 2 instances" in err
    assert "test: references 2/2 solved in" in err
    full = QoSDDataModule(**TINY, test_size=6, batch_size=2)
    full.setup("test")
    assert len(full.graphs["test"]) == 6
    for mine, theirs in zip(limited.graphs["test"], full.graphs["test"][:2], strict=True):
        assert np.array_equal(mine.instance.pairs, theirs.instance.pairs)
        assert np.array_equal(mine.stress.numpy(), theirs.stress.numpy())
