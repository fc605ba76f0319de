"""The README's headline numbers are the numbers of their published results."""

from __future__ import annotations

import pytest

from optiforge.benchmarks.reproduction.model import Claim, Number
from optiforge.benchmarks.reproduction.readme_check import (
    README,
    appears,
    headline_cells,
    mismatches,
)
from optiforge.benchmarks.reproduction.registry import CLAIMS
from optiforge.benchmarks.reproduction.select import at

CELLS = headline_cells(README.read_text())


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: f"{claim.system}-{claim.result}")
def test_headline_numbers_match_their_result_files(claim: Claim) -> None:
    """Each registered README number, read from its result file, is written in its cell."""
    assert mismatches(claim, CELLS[claim.system], claim.values()) == []


def test_every_system_of_the_readme_table_has_a_claim() -> None:
    """The registry covers exactly the systems of the README table (18 rows)."""
    assert len(CELLS) == 18
    assert {claim.system for claim in CLAIMS} == set(CELLS)


def test_a_changed_number_is_reported() -> None:
    """A cell that writes another number than the result holds fails the check."""
    claim = Claim("x", "p", "c", "m", "r", numbers=(Number("gap", at("gap"), ".3f"),))
    assert mismatches(claim, "gap 1.020 vs LP", [1.0202]) == []
    assert mismatches(claim, "gap 1.020 vs LP", [1.0252]) == ["gap: 1.025"]


def test_a_number_must_stand_alone_in_the_cell() -> None:
    """0.98 is not found inside 0.985 nor 10.98; 8 is found in '8 %' but not in '18'."""
    assert not appears("0.98", "ratio 0.985")
    assert not appears("0.98", "ratio 10.98")
    assert appears("8", "m = 8 0.95")
    assert not appears("8", "18 %")


def test_headline_cells_are_read_from_the_systems_table() -> None:
    """A table row linking docs/<page>.md gives that page's last cell; other lines are skipped."""
    text = "| a | b |\n| [FSNet](docs/fsnet.md) | what | `cmd` | gap 1e-3 |\n| plain | x |\n"
    assert headline_cells(text) == {"fsnet": "gap 1e-3"}
