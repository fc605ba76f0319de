"""Progress lines while a data module solves reference instances, and how many it must solve.

Reference solvers (Clarabel / SLSQP for the constrained families, PyVRP, exact LPs) take
seconds to minutes per split before the first evaluation batch; without a line the run looks
hung. `ReferenceProgress` prints, on rank zero and to stderr, a start line, one line per tenth
of the instances (with the time so far and an estimate of the rest) and an end line.
`evaluated_instances` is the number of instances the trainer's `limit_<split>_batches` will
actually evaluate, so that references are solved for those only.

Example:
    >>> import io
    >>> progress = ReferenceProgress("test", 4, stream=io.StringIO())
    >>> progress(4, 4)
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

from lightning.pytorch.utilities import rank_zero_only

STEPS = 10


class ReferenceProgress:
    """Callable `(done, total)`, called after each solved instance; prints at the start, at
    every tenth of `total` and at the end, to `stream` (None: the current sys.stderr)."""

    def __init__(self, split: str, total: int, stream: TextIO | None = None) -> None:
        self.split, self.total, self.stream = split, total, stream
        self.start = time.perf_counter()
        self.reported = 0
        self._print(f"{split}: solving references for {total} instances ...")

    def __call__(self, done: int, total: int) -> None:
        step = done * STEPS // total
        if step <= self.reported and done < total:
            return
        self.reported = step
        elapsed = time.perf_counter() - self.start
        left = elapsed * (total - done) / done if done else float("nan")
        tail = "done" if done == total else f"about {left:.0f} s left"
        self._print(f"{self.split}: references {done}/{total} solved in {elapsed:.0f} s ({tail})")

    @rank_zero_only
    def _print(self, line: str) -> None:
        print(line, file=sys.stderr if self.stream is None else self.stream, flush=True)


def evaluated_instances(trainer: object | None, split: str, size: int, batch_size: int) -> int:
    """How many of `size` instances (batches of `batch_size`, in order) the trainer evaluates
    under `limit_<split>_batches` (an int: that many batches; a float: that share of the
    batches, rounded up); all of them without a trainer. At least one batch."""
    limit = getattr(trainer, f"limit_{split}_batches", None) if trainer is not None else None
    batches = math.ceil(size / batch_size)
    if isinstance(limit, int):
        batches = min(batches, limit)
    elif isinstance(limit, float):
        batches = min(batches, math.ceil(batches * limit))
    return min(size, max(1, batches) * batch_size)
