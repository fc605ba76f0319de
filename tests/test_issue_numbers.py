"""No tracked source, doc or config file names an issue number: users cannot see the issues."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)
SUFFIXES = (".py", ".md", ".yaml", ".yml")


def tracked_text_files() -> list[Path]:
    """The .py / .md / .yaml files git tracks in this checkout that are present on disk."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--", *(f"*{suffix}" for suffix in SUFFIXES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if listing.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listing.stdout.split("\0") if (ROOT / name).is_file()]


@given(st.integers(0, 10_000), st.sampled_from(["issue", "Issue", "ISSUES", "issue #", "issue#"]))
def test_pattern_finds_issue_numbers(number: int, word: str) -> None:
    """The word issue(s) then a number is found in any case, with or without #; "tissue" is not."""
    assert ISSUE_NUMBER.search(f"targets ({word} {number}): met")
    assert ISSUE_NUMBER.search(f"{word}{number}.")
    assert not ISSUE_NUMBER.search(f"the issue's batch size {number}; tissue {number}")


def test_no_tracked_file_names_an_issue_number() -> None:
    """Every tracked .py / .md / .yaml file says what a target is, not which issue asked for it."""
    files = tracked_text_files()
    assert any(path.name == "README.md" for path in files)
    hits = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if ISSUE_NUMBER.search(line)
    ]
    assert hits == []
