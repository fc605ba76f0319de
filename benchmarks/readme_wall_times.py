"""How long each command of the README's systems table takes, run as written.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run readme_wall_times [--threads 1]

Every command of the table's "try it" column (cells split at `;`) runs from the clone's root in
a child process with `OMP_NUM_THREADS=--threads`, and the record keeps its wall time and the
child's CPU time (user + system). On a busy machine the wall time grows with the load while the
CPU time does not: with one thread, the CPU time is the wall time of a quiet core, the figure the
README states beside every command that takes a minute or more (tests/benchmarks/
test_readme_wall_times.py checks the README against this record). The benchmark commands are
skipped by default (`--skip`): each published result records its own wall time.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.benchmarks.harness.record import ROOT

TABLE_ROW = re.compile(r"^\| \[([^\]]+)\]\(docs/[^)]+\.md\) \|")
CODE = re.compile(r"`([^`]+)`")
LONG_SECONDS = 60.0


def readme_commands(text: str) -> list[tuple[str, str]]:
    """(system, command) for each inline command of the systems table's "try it" column."""
    found = []
    for line in text.splitlines():
        match = TABLE_ROW.match(line)
        if match:
            cell = line.split(" | ")[2]
            found += [(match.group(1), command) for command in CODE.findall(cell)]
    return found


def child_cpu_seconds() -> float:
    """User + system CPU seconds of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def user_files(words: list[str]) -> list[str]:
    """The text files a command reads that the clone does not hold (the user's own data)."""
    return [word for word in words if word.endswith(".txt") and not (ROOT / word).exists()]


def measure(command: str, threads: int) -> dict[str, object]:
    """Run one command from the clone's root; its wall and CPU seconds and how it ended (not run
    when it reads a file the user brings)."""
    words = shlex.split(command)
    if missing := user_files(words):
        return {"command": command, "status": f"not run: reads the user's {', '.join(missing)}"}
    while words and "=" in words[0]:  # a leading VAR=value is set below, as the shell would
        words.pop(0)
    words[0] = sys.executable if words[0] == "python" else words[0]
    env = os.environ | {"OMP_NUM_THREADS": str(threads), "WANDB_MODE": "offline"}
    cpu_before, began = child_cpu_seconds(), time.perf_counter()
    done = subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return {
        "command": command,
        "wall_seconds": wall,
        "cpu_seconds": child_cpu_seconds() - cpu_before,
        "status": "ok" if done.returncode == 0 else f"exit {done.returncode}: {last[:200]}",
    }


@dataclass
class Config:
    """Which commands, on how many threads."""

    threads: int = 1
    skip: str = r"optiforge\.benchmarks|algorithms\.generalization"  # their records time them
    systems: tuple[str, ...] = ()  # empty: every system
    commands: tuple[str, ...] = ()  # given: these instead of the README's


COLUMNS = [
    Column("system", "system"),
    Column("command", lambda row: f"`{row['command']}`"),
    Column("CPU s", "cpu_seconds", ".0f"),
    Column("wall s", "wall_seconds", ".0f"),
    Column("status", "status"),
]


def selected(args: Config) -> list[tuple[str, str]]:
    """The commands this run measures: the README's (or `--commands`), less the skipped."""
    if args.commands:
        return [("given", command) for command in args.commands]
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    return [
        (system, command)
        for system, command in commands
        if not re.search(args.skip, command) and (not args.systems or system in args.systems)
    ]


def run(run: Run, args: Config) -> None:
    """Measure each selected command in turn and write the table."""
    rows = []
    for system, command in selected(args):
        run.log(f"{system}: {command}")
        rows.append({"system": system, **measure(command, args.threads)})
        run.log(f"  {rows[-1].get('cpu_seconds', 0):.0f} CPU s, {rows[-1]['status']}")
    text = (
        f"# README commands: CPU and wall seconds ({args.threads} thread(s) per command)\n\n"
        f"{markdown_table(rows, COLUMNS)}\n"
    )
    run.write("readme_wall_times", {"args": asdict(args), "rows": rows}, text)


BENCHMARK = Benchmark(
    "readme_wall_times",
    run,
    Config,
    smoke=dict(commands=("python -m optiforge.algorithms.replicable_testing --help",)),
)

if __name__ == "__main__":
    BENCHMARK.main()
