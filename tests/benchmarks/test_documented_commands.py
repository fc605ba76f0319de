"""Every `python -m optiforge.benchmarks...` command in README.md and docs/ names a registered
benchmark and parses with its options (nothing is run)."""

from __future__ import annotations

import re
import shlex

import pytest

from optiforge.benchmarks.harness import cli, registry
from optiforge.benchmarks.harness.record import ROOT

INLINE_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
COMMAND = re.compile(r"python -m optiforge\.benchmarks(?:\.(\w+)| run (\w+))((?:\\\n|[^\n`|;&#])*)")


def documented() -> list[tuple[str, str, list[str]]]:
    """(where, benchmark name, arguments) of each documented command."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        # an inline code span may wrap over lines: read its line breaks as continuations
        text = INLINE_CODE.sub(lambda m: m.group(0).replace("\n", " \\\n"), path.read_text())
        for match in COMMAND.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            arguments = shlex.split(match.group(3).replace("\\\n", " "))
            found.append((f"{path.name}:{line}", match.group(1) or match.group(2), arguments))
    return found


COMMANDS = documented()


def test_commands_are_found() -> None:
    """The scan sees the documented commands (a broken pattern would pass everything)."""
    assert len(COMMANDS) > 50
    assert any(name == "covering" for _, name, _ in COMMANDS)


def test_no_command_names_the_bare_package() -> None:
    """Documented commands use the namespace: `python -m optiforge.benchmarks`, never the bare
    package name (which this scan would not see)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    bare = re.compile(r"python -m (benchmarks)\b")
    assert [page.name for page in pages if bare.search(page.read_text())] == []


@pytest.mark.parametrize(("where", "name", "arguments"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_documented_command_parses(where: str, name: str, arguments: list[str]) -> None:
    """A registered name whose options parse and pass the value checks (the data a user brings
    need not be here)."""
    assert name in registry.NAMES, f"{where}: {name} is no registered benchmark"
    cli.parse(["run", name, *arguments], data_present=False)
