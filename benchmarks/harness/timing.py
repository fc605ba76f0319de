"""One timing helper for every benchmark: warm-up calls, timed repeats, CUDA synchronisation."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Seconds of each timed repeat (one repeat = `calls` calls, reported per call)."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)


def cuda_sync(device: str) -> Callable[[], None] | None:
    """`torch.cuda.synchronize` on a CUDA device (kernels end inside the timed span), else None."""
    if not str(device).startswith("cuda"):
        return None
    import torch

    return torch.cuda.synchronize


def timeit(
    fn: Callable[[], object],
    *,
    warmup: int = 1,
    repeats: int = 5,
    calls: int = 1,
    sync: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Call `fn` `warmup` times untimed, then time `repeats` repeats of `calls` calls each;
    `sync` (e.g. `cuda_sync(device)`) runs before each clock reading."""
    if warmup < 0 or repeats < 1 or calls < 1:
        raise ValueError(
            f"need warmup >= 0, repeats >= 1, calls >= 1; got {warmup}, {repeats}, {calls}"
        )
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(repeats):
        if sync:
            sync()
        start = clock()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        seconds.append((clock() - start) / calls)
    return Timing(tuple(seconds))


def interleaved(
    fns: Mapping[str, Callable[[], object]],
    *,
    warmup: int = 1,
    rounds: int = 5,
    calls: int = 1,
    sync: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Timing]:
    """Time several methods in alternating rounds (A B A B ...), so that load from other
    processes hits both sides of a ratio alike; one `Timing` per method."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    seconds: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            timing = timeit(fn, warmup=0, repeats=1, calls=calls, sync=sync, clock=clock)
            seconds[name].append(timing.seconds[0])
    return {name: Timing(tuple(values)) for name, values in seconds.items()}
