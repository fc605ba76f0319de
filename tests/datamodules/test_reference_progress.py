"""Progress lines while references are solved, and the instance count a batch limit keeps."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from optiforge.datamodules.reference_progress import ReferenceProgress, evaluated_instances


def test_progress_prints_start_each_tenth_and_end() -> None:
    """20 instances: a start line, one line per two instances (each tenth), the last 'done'."""
    stream = io.StringIO()
    progress = ReferenceProgress("test", 20, stream=stream)
    for done in range(1, 21):
        progress(done, 20)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "test: solving references for 20 instances ..."
    assert len(lines) == 11
    assert lines[1].startswith("test: references 2/20 solved in ")
    assert lines[-1].startswith("test: references 20/20 solved in ") and "done" in lines[-1]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(None, 100), (1.0, 100), (2, 64), (50, 100), (0.5, 64), (0.1, 32), (0, 32)],
)
def test_evaluated_instances_follow_the_batch_limit(limit: float | None, expected: int) -> None:
    """100 instances in batches of 32 (4 batches): an int limit keeps that many batches, a
    float that share rounded up, never fewer than one batch nor more than the split."""
    trainer = None if limit is None else SimpleNamespace(limit_test_batches=limit)
    assert evaluated_instances(trainer, "test", 100, 32) == expected
