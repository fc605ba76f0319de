"""Peak tensor memory of a stretch of code, in bytes above what was held when it started.

What is counted: the bytes of torch tensors allocated after `start()` and not yet freed, at
their maximum before `stop()`; memory held at `start()` (a model's parameters, its data) is
the zero.

- CPU: torch's profiler with `profile_memory=True` reports every allocation (+ bytes) and free
  (- bytes) of the CPU allocator with its address, in time order; the peak is the maximum of
  the running sum of the blocks allocated after `start()` less their frees (0 if nothing was
  allocated). The free of a block allocated before `start()` is left out: torch's allocator
  does not report it reliably (not at all, or with a size from an earlier profiling session),
  so a measurement does not depend on what ran before it. Memory that bypasses the allocator
  (a numpy array under `torch.from_numpy`, a library's own scratch buffers) is not seen.
- CUDA: the caching allocator's `max_memory_allocated` after `reset_peak_memory_stats`, minus
  `memory_allocated` at `start()` (bytes of the device's tensors, each block rounded up to the
  allocator's 512-byte granularity; host memory is not counted; a free of a block allocated
  before `start()` does lower it).

`start()` first runs Python's garbage collector, so that cyclic garbage of earlier work is not
freed inside the measurement and the collector's next run falls at the same point of the
measured code every time: one measurement is reproducible to the byte on CPU.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any

import torch
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile


def window_peak(events: Iterable[tuple[int, int]]) -> int:
    """The most bytes held at once by the blocks allocated in `events`, (address, + size) for
    an allocation and (address, - size) for a free, in time order; the free of an address not
    allocated in `events` (a block from before) is ignored. At least 0 (before any event)."""
    live: dict[int, int] = {}
    total = peak = 0
    for address, size in events:
        if size > 0:
            live[address] = size
            total += size
            peak = max(peak, total)
        elif address in live:
            total -= live.pop(address)
    return peak


class PeakMemory:
    """Peak tensor bytes on `device` between `start()` and `stop()` (or over a `with` block),
    above what was held at `start()` (module docstring: what is counted)."""

    def __init__(self, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be cpu or cuda, got {self.device}")
        self.peak_bytes: int | None = None
        self._profiler: profile | None = None
        self._baseline = 0

    def start(self) -> None:
        """Begin the measurement (after a garbage collection): what is held now is the zero."""
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
            self._baseline = torch.cuda.memory_allocated(self.device)
            return
        self._profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._profiler.start()

    def stop(self) -> int:
        """End the measurement; the peak bytes above the start (also kept in `peak_bytes`)."""
        if self.device.type == "cuda":
            self.peak_bytes = torch.cuda.max_memory_allocated(self.device) - self._baseline
            return self.peak_bytes
        if self._profiler is None:
            raise RuntimeError("PeakMemory.stop() before start()")
        self._profiler.stop()
        tree = self._profiler.profiler.kineto_results.experimental_event_tree()
        self._profiler = None
        events = sorted(_cpu_allocations(tree), key=lambda event: event[0])  # stable on ties
        self.peak_bytes = window_peak((address, size) for _, address, size in events)
        return self.peak_bytes

    def __enter__(self) -> PeakMemory:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def _cpu_allocations(tree: list[Any]) -> Iterator[tuple[int, int, int]]:
    """(time in ns, address, +/- bytes) of every CPU allocator event of a profiler event tree
    (allocation events are leaves under the ops that made them), in the tree's order."""
    stack = list(reversed(tree))
    while stack:
        event = stack.pop()
        stack.extend(reversed(event.children))
        if event.tag == _EventType.Allocation and event.extra_fields.device.type == "cpu":
            fields = event.extra_fields
            yield event.start_time_ns, fields.ptr, fields.alloc_size
