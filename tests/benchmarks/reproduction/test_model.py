"""Verdict rules, number formatting and provenance columns of the reproduction report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.benchmarks.reproduction.model import Better, Claim, Every, Number, Threshold, Verdict
from optiforge.benchmarks.reproduction.report import command, commit, page_markdown
from optiforge.benchmarks.reproduction.select import at, field, rows

R, P, N = Verdict.REPRODUCES, Verdict.PARTLY, Verdict.NOT


def test_better_compares_with_the_best_peer() -> None:
    """Lower is better: below every peer reproduces, within 5 % of the best partly, else not."""
    rule = Better(0, (1, 2))
    assert rule.verdict([1.0, 1.5, 1.1]) is R
    assert rule.verdict([1.12, 1.5, 1.1]) is P  # 1.12 <= 1.1 * 1.05
    assert rule.verdict([1.2, 1.5, 1.1]) is N
    assert Better(0, (1,), lower=False).verdict([0.95, 0.93]) is R
    assert Better(0, (1,), lower=False, partly=0.0).verdict([0.93, 0.95]) is N


def test_threshold_and_every() -> None:
    """A bound reproduces, a looser one partly; Every is partly when only some rules hold."""
    gap = Threshold(0, 1e-3, partly=1e-2)
    assert [gap.verdict([v]) for v in (5e-4, 1.68e-3, 0.5)] == [R, P, N]
    assert Threshold(0, 2.0, lower=False).verdict([2.08]) is R
    both = Every((Threshold(0, 1.0), Threshold(1, 1.0)))
    assert [both.verdict(v) for v in ([0.5, 0.5], [0.5, 2.0], [2.0, 2.0])] == [R, P, N]


@given(ours=st.floats(0.01, 100), peers=st.lists(st.floats(0.01, 100), min_size=1, max_size=4))
def test_better_reproduces_exactly_when_ours_is_lowest(ours: float, peers: list[float]) -> None:
    """Lower-is-better with no tolerance: reproduces iff ours is below every peer."""
    rule = Better(0, tuple(range(1, len(peers) + 1)), partly=0.0)
    verdict = rule.verdict([ours, *peers])
    assert (verdict is R) == (ours < min(peers))
    assert verdict is not P or ours == min(peers)


def test_numbers_are_formatted_as_the_docs_write_them() -> None:
    """Exponents lose their leading zeros and plus sign; fixed formats are plain."""
    number = Number("gap", at("gap"), ".2e")
    assert number.text(0.0016839) == "1.68e-3"
    assert Number("x", at("x"), ".0e").text(4.331e-15) == "4e-15"
    assert Number("x", at("x"), ".0e").text(2.0e4) == "2e4"
    assert Number("x", at("x"), ".3f").text(1.0202) == "1.020"


def test_selectors_read_and_name_what_is_missing() -> None:
    """`field` reads the matching entry; no match raises naming the path and the fields."""
    result = {"rows": [{"m": "a", "v": 1.0}, {"m": "b", "v": 2.5}]}
    assert field(("rows",), "v", m="b")(result) == 2.5
    with pytest.raises(KeyError, match="rows with {'m': 'c'}"):
        rows(result, ("rows",), m="c")


def test_provenance_columns_say_what_was_not_recorded() -> None:
    """A command or commit absent from the provenance is shown as not recorded."""
    assert command({"provenance": {"command": None}}) == "not recorded"
    assert command({"provenance": {"command": "python -m optiforge.benchmarks run x"}}) == (
        "`python -m optiforge.benchmarks run x`"
    )
    with_args = {"provenance": {"command": None, "arguments": "args"}}
    assert command(with_args) == "not recorded (arguments: `args` in the result)"
    assert commit({}) == "not recorded"
    annotated = {"provenance": {"annotated": True, "git": {"commit": "0123456789abcdef"}}}
    assert commit(annotated) == "`0123456789` (publishing commit)"
    dirty = {"provenance": {"git": {"commit": "0123456789abcdef", "dirty": True}}}
    assert commit(dirty) == "`0123456789` (uncommitted changes)"


def test_page_counts_verdicts_and_has_one_row_per_claim() -> None:
    """A claim without a result is counted as such and gets a row with its system's link."""
    claims = (Claim("classifier", "none", "-", "accuracy", None),)
    page = page_markdown(claims)
    assert (
        "1 claims; reproduces: 0, partly: 0, not: 0, not judged: 0, no published result: 1." in page
    )
    row = "| [classifier](classifier.md) | none | - | accuracy | - | **no published result** | - |"
    assert row in page
    assert page.startswith("---\nhide:\n")  # front matter: the table gets the page's width
