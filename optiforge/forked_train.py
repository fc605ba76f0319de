"""`python train.py ...` runs as child processes forked from one warm server that imported
the CLI once (multiprocessing's forkserver, preloading `optiforge.forked_train_server`).

A fresh interpreter per run pays the import of Lightning, about 10 s on a 2-core CPU; a child
forked from the server starts in a fraction of a second, with the state a fresh interpreter has
after `import optiforge.cli` and nothing more. Each child runs `train.py`'s `main` on its
command line, in its own folder, with its own environment, its stdout and stderr in two files.
The server starts once per process, with the environment of its first caller (its interpreter
keeps that hash seed), and ends, at once, with that process. As with any multiprocessing start
method but fork, a script that starts children must guard its work with
`if __name__ == "__main__":` (each child imports the script's main module). Lightning's DDP
launcher starts the other ranks of a child as fresh `python train.py ...` processes, as it does
for a command typed in a shell.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

# train.py of a clone (an installed copy has none: the path then only names the program)
TRAIN_PY = Path(__file__).resolve().parents[1] / "train.py"
STOP_GRACE_SECONDS = 2.0
# What the warm server imports once, before it forks the children.
SERVER_PRELOAD = ["optiforge.forked_train_server"]


class Children:
    """The running children, forked from the warm server (started on the first `start`, with
    the environment `server_env`), so that an interrupted caller can stop them. A child's exit
    status is read once, by `wait` (its caller's thread)."""

    def __init__(self, server_env: Mapping[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._running: dict[multiprocessing.process.BaseProcess, threading.Event] = {}
        self._server_env = dict(os.environ if server_env is None else server_env)
        self._server_started = False
        self.stopping = False

    def start(
        self, target: Callable[..., None], *args: object
    ) -> multiprocessing.process.BaseProcess:
        """Fork `target(*args)` from the warm server, registered; refused once `stop_all` has
        begun."""
        with self._lock:
            if self.stopping:
                raise RuntimeError("stopped: the runs were interrupted")
            if not self._server_started:
                start_server(self._server_env)
                self._server_started = True
            process = multiprocessing.get_context("forkserver").Process(target=target, args=args)
            process.start()
            self._running[process] = threading.Event()
            return process

    def wait(
        self, process: multiprocessing.process.BaseProcess, timeout: float | None = None
    ) -> int:
        """Block until `process` has ended and been reaped; its exit status (negative: the
        signal that ended it). After `timeout` seconds it is killed and TimeoutError raised."""
        process.join(timeout)
        timed_out = process.exitcode is None
        if timed_out:
            process.kill()
            process.join()
        with self._lock:
            ended = self._running.pop(process)
        ended.set()
        assert process.exitcode is not None
        if timed_out:
            raise TimeoutError(f"train.py child {process.pid} ran over {timeout} s")
        return process.exitcode

    def stop_all(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """SIGINT every running child, SIGKILL those still alive after `grace` seconds, and
        return once their waiters have reaped them all."""
        with self._lock:
            self.stopping = True
            running = list(self._running.items())
        for process, ended in running:
            if not ended.is_set() and process.pid is not None:
                with suppress(ProcessLookupError):  # it has just ended
                    os.kill(process.pid, signal.SIGINT)
        deadline = time.monotonic() + grace
        for process, ended in running:
            if not ended.wait(max(0.0, deadline - time.monotonic())):
                process.kill()
                ended.wait()


@contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """`os.environ` is `env` inside the block, and as before after it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def start_server(env: Mapping[str, str]) -> None:
    """Start the warm server (once per process) with the children's environment, so that its
    interpreter has their hash seed, then import the CLI in it."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(SERVER_PRELOAD)
    with environment(env):
        multiprocessing.forkserver.ensure_running()


def free_port() -> int:
    """A TCP port on localhost that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ddp_environments(env: Mapping[str, str], world_size: int) -> list[dict[str, str]]:
    """`env` for each rank of a one-machine DDP run whose ranks are all forked from the warm
    server, as `torchrun` would start them: with LOCAL_RANK set, Lightning's launcher starts no
    process of its own (`creates_processes_externally`), and no rank pays a fresh import."""
    shared = {**env, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    shared |= {"WORLD_SIZE": str(world_size), "NODE_RANK": "0"}
    return [{**shared, "LOCAL_RANK": str(r), "RANK": str(r)} for r in range(world_size)]


def run_ranks(
    children: Children,
    command: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    ranks: int,
    logs: Path,
    timeout: float | None = None,
) -> list[int]:
    """`command` (`python train.py ...`, giving the devices and strategy) as `ranks` processes
    forked by `children`: one process when `ranks` is 1, else the DDP ranks of
    `ddp_environments`. Rank r's stdout and stderr go to `logs/rank<r>/`; returns each rank's
    exit status, in rank order, once all have ended."""
    environments = ddp_environments(env, ranks) if ranks > 1 else [dict(env)]
    processes = []
    for rank, rank_env in enumerate(environments):
        (logs / f"rank{rank}").mkdir(parents=True, exist_ok=True)
        processes.append(children.start(run_train_py, command, cwd, rank_env, logs / f"rank{rank}"))
    return [children.wait(process, timeout) for process in processes]


def run_train_py(
    command: Sequence[str], cwd: Path, env: Mapping[str, str], logs: Path | None = None
) -> None:
    """A forked child's body: `command` (`python train.py ...`) run by `train.py`'s `main`,
    in `cwd`, with `env`, its stdout and stderr in `stdout.log` and `stderr.log` of `logs`
    (default `cwd`)."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for descriptor, name in ((1, "stdout.log"), (2, "stderr.log")):
        log = os.open((logs or cwd) / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, descriptor)
        os.close(log)
    import torch

    torch.set_num_threads(int(env.get("OMP_NUM_THREADS") or os.cpu_count() or 1))
    from optiforge.cli import main

    sys.argv = [str(TRAIN_PY), *command[2:]]
    main()
