"""The README's commands and the published record of how long each takes: the parser finds the
table's commands, the measurement counts a child's CPU time, and every command that takes a
minute or more states its time in the README, consistent with the record."""

from __future__ import annotations

import json
import re

import pytest

from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.readme_wall_times import (
    LONG_SECONDS,
    Config,
    measure,
    readme_commands,
    selected,
)

README = (ROOT / "README.md").read_text(encoding="utf-8")
RECORD = ROOT / "benchmarks" / "results" / "readme_wall_times.json"
STATED = re.compile(r"about (\d+(?:\.\d+)?) (min|s)\b")


def test_stated_time_is_the_one_after_its_command() -> None:
    """In a cell of two commands each reads its own time; none stated is None."""
    cell = "`python a.py` (about 12 min on one core); `python b.py` (about 40 s); `python c.py`"
    assert stated_seconds(cell, "python a.py") == 720.0
    assert stated_seconds(cell, "python b.py") == 40.0
    assert stated_seconds(cell, "python c.py") is None


def test_parser_reads_the_try_it_column_of_a_table_row() -> None:
    """Two commands of one cell, split at the inline spans; other columns and rows ignored."""
    text = (
        "| [Demo](docs/demo.md) | what `python no.py` | `python a.py --x 1`; `python b.py` | 3 |\n"
        "| not a system row | `python c.py` | `python d.py` | 4 |\n"
    )
    assert readme_commands(text) == [("Demo", "python a.py --x 1"), ("Demo", "python b.py")]


def test_every_system_row_has_a_command() -> None:
    """The README's table: at least one command per system, the default experiment first."""
    commands = readme_commands(README)
    systems = {system for system, _ in commands}
    assert len(systems) >= 18 and commands[0] == ("Reference classifier", "python train.py")


def test_measure_counts_the_child_cpu_time_and_names_a_failure() -> None:
    """A child spinning ~0.3 s of CPU is counted (its CPU time <= its wall time on one thread);
    a failing command keeps its last error line; a user's missing file is not run."""
    loop = "import time; t = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    spin = measure(f"python -c '{loop}'", 1)
    assert spin["status"] == "ok" and 0.3 <= spin["cpu_seconds"] <= spin["wall_seconds"] + 0.05
    failed = measure("python -c 'raise SystemExit(\"error: bad value\")'", 1)
    assert failed["status"] == "exit 1: error: bad value"
    assert (
        measure("python x.py --samples mine.txt", 1)["status"]
        == "not run: reads the user's mine.txt"
    )


def stated_seconds(cell: str, command: str) -> float | None:
    """The time a README cell states for one of its commands, right after it ("`cmd` (about 12
    min ...)", "about 40 s"), if any."""
    after = cell.split(f"`{command}`", 1)[1].split("`", 1)[0]
    match = STATED.search(after)
    if match is None:
        return None
    return float(match.group(1)) * (60.0 if match.group(2) == "min" else 1.0)


def cells() -> dict[str, str]:
    """System -> its "try it" cell."""
    rows = [line.split(" | ") for line in README.splitlines() if line.startswith("| [")]
    return {row[0].split("]")[0][3:]: row[2] for row in rows}


@pytest.mark.skipif(not RECORD.is_file(), reason="readme_wall_times not published yet")
def test_long_commands_state_their_measured_time() -> None:
    """Every command the record measured is still in the README (the record is current), and
    each that took a minute of CPU or more has its time stated in its cell, within a factor
    1.5 of the record (a run bounded by `--trainer.max_time`: that bound)."""
    rows = json.loads(RECORD.read_text())["rows"]
    measured = {row["command"]: row for row in rows}
    wanted = [command for _, command in selected(Config())]
    assert sorted(measured) == sorted(wanted), (
        "re-run: python -m optiforge.benchmarks run readme_wall_times --publish"
    )
    by_system = cells()
    for system, command in selected(Config()):
        seconds = measured[command].get("cpu_seconds")
        if seconds is None or seconds < LONG_SECONDS:
            continue
        stated = stated_seconds(by_system[system], command)
        assert stated is not None, f"{system}: `{command}` takes {seconds:.0f} s; say so"
        if bound := max_time_seconds(command):  # wall-clock bound: the README states it
            assert stated == bound, (system, stated, bound)
        else:
            assert seconds / 1.5 <= stated <= seconds * 1.5, (system, stated, seconds)


def max_time_seconds(command: str) -> float | None:
    """The `--trainer.max_time DD:HH:MM:SS` a training command is bounded by, in seconds."""
    match = re.search(r"--trainer\.max_time (\d+):(\d+):(\d+):(\d+)", command)
    if match is None:
        return None
    days, hours, minutes, seconds = (int(group) for group in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def test_max_time_is_read_in_seconds() -> None:
    """00:00:15:00 is 900 s; a command without the option has none."""
    assert max_time_seconds("python train.py fit --trainer.max_time 00:00:15:00") == 900.0
    assert max_time_seconds("python train.py fit") is None
