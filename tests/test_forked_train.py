"""train.py runs forked from the warm server: stopped within the grace period, run in their own
folder with their output in files, and killed when they run over a timeout."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from optiforge.forked_train import TRAIN_PY, Children, ddp_environments, run_train_py


def ignore_sigint_and_sleep() -> None:
    """A child that ignores SIGINT (as a run stuck in C code would)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(60)


# The warm server starts once per process: one worker runs the tests that use it.
@pytest.mark.xdist_group("warm_server")
def test_children_are_stopped_within_the_grace_period() -> None:
    """`Children.stop_all` ends a child that ignores SIGINT by SIGKILL after the grace period,
    returns once it is reaped, and refuses to start new children afterwards."""
    children = Children()
    process = children.start(ignore_sigint_and_sleep)
    statuses: list[int] = []
    waiter = threading.Thread(target=lambda: statuses.append(children.wait(process)))
    waiter.start()
    time.sleep(0.5)
    children.stop_all(grace=0.5)
    waiter.join()
    assert statuses == [-signal.SIGKILL]
    with pytest.raises(RuntimeError, match="interrupted"):
        children.start(ignore_sigint_and_sleep)


@pytest.mark.xdist_group("warm_server")
def test_a_child_runs_train_py_in_its_folder_with_its_environment(tmp_path: Path) -> None:
    """The forked child runs train.py's `main` on the command line it is given, in its folder
    (where a relative config is looked for), and leaves its stderr in `stderr.log` there: a
    missing config ends as on the command line, in one line and with status 2."""
    children = Children()
    command = [sys.executable, str(TRAIN_PY), "fit", "--config", "nope.yaml"]
    process = children.start(run_train_py, command, tmp_path, dict(os.environ))
    assert children.wait(process) == 2
    stderr = (tmp_path / "stderr.log").read_text()
    assert stderr.startswith(
        f"train.py fit: error: config: no file nope.yaml (looked in {tmp_path} "
    )
    assert stderr.count("\n") == 1


@pytest.mark.xdist_group("warm_server")
def test_a_child_over_its_timeout_is_killed() -> None:
    """`wait` with a timeout kills a child still running after it and says so."""
    children = Children()
    process = children.start(ignore_sigint_and_sleep)
    with pytest.raises(TimeoutError, match="ran over 0.5 s"):
        children.wait(process, timeout=0.5)
    assert process.exitcode == -signal.SIGKILL


def test_ddp_environments_describe_one_machine_of_ranks() -> None:
    """Each rank's environment keeps the caller's, names its own rank, and all share one free
    localhost port and the world size (what Lightning reads to skip its own launcher)."""
    envs = ddp_environments({"KEEP": "1"}, 3)
    assert [(e["LOCAL_RANK"], e["RANK"]) for e in envs] == [("0", "0"), ("1", "1"), ("2", "2")]
    assert {e["MASTER_PORT"] for e in envs} == {envs[0]["MASTER_PORT"]}
    assert all(e["WORLD_SIZE"] == "3" and e["KEEP"] == "1" for e in envs)
    with socket.socket() as probe:  # the port was free when chosen
        probe.bind(("127.0.0.1", int(envs[0]["MASTER_PORT"])))
