"""Run a function on 2 CPU ranks (gloo) for the optimizers' distributed tests.

The ranks are forked from the test's process: they start with its imports done (a spawned rank
re-imports torch and the test module, seconds per rank on 2 cores) and run only the worker.

Each rank uses one intra-op thread (2 ranks on 2 cores), joins a fresh TCP rendezvous, runs
the worker, destroys the process group, then leaves with `os._exit(0)`: the rank's work is
done and written out by then, and skipping interpreter teardown avoids a rare SIGABRT
("terminate called without an active exception") that gloo's and the store's threads can
raise while static objects are destroyed, which failed CI once with correct results on disk.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rank_entry(rank: int, worker: Callable[..., None], port: int, args: tuple[Any, ...]) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE
    )
    try:
        worker(rank, *args)
    finally:
        dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_on_two_ranks(worker: Callable[..., None], *args: Any) -> None:
    """Call `worker(rank, *args)` on ranks 0 and 1 (module-level function: it is pickled)."""
    mp.start_processes(
        _rank_entry,
        args=(worker, free_port(), args),
        nprocs=WORLD_SIZE,
        join=True,
        start_method="fork",
    )
