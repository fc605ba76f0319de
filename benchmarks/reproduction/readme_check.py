"""The README's headline column against the claims registry: each registered number, read
from its result file and formatted as the docs write it, must appear in its system's cell."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from optiforge.benchmarks.reproduction.model import Claim

README = Path(__file__).resolve().parents[2] / "README.md"
SYSTEM_LINK = re.compile(r"\(docs/(\w+)\.md\)")


def headline_cells(readme: str) -> dict[str, str]:
    """The systems table's headline (last) cell by system, the system named by its docs page."""
    cells = {}
    for line in readme.splitlines():
        link = SYSTEM_LINK.search(line.split("|")[1]) if line.startswith("| [") else None
        if link:
            cells[link[1]] = line.strip().strip("|").split("|")[-1].strip()
    return cells


def appears(text: str, cell: str) -> bool:
    """Whether a number is written in a cell as a whole number (not inside a longer one)."""
    return re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", cell) is not None


def mismatches(claim: Claim, cell: str, values: Sequence[float]) -> list[str]:
    """The claim's README numbers (as read from the results) that its system's cell lacks."""
    return [
        f"{number.what}: {number.text(value)}"
        for number, value in zip(claim.numbers, values, strict=True)
        if number.readme and not appears(number.text(value), cell)
    ]
