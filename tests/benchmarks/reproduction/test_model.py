"""Verdict rules, number formatting and provenance columns of the reproduction report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.benchmarks.reproduction.claims_learned import of_testbed, solver_speedups
from optiforge.benchmarks.reproduction.claims_methods import diverse_savings
from optiforge.benchmarks.reproduction.model import Better, Claim, Every, Number, Threshold, Verdict
from optiforge.benchmarks.reproduction.report import command, commit, page_markdown
from optiforge.benchmarks.reproduction.select import across, at, field, rows

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
    """A testbed's claim (no paper result) is counted as such; its row links its result."""
    claims = (Claim("classifier", "none", "-", "accuracy", "testbeds", published=False),)
    page = page_markdown(claims)
    assert (
        "1 claims; reproduces: 0, partly: 0, not: 0, not judged: 0, no published result: 1." in page
    )
    row = (
        "| [classifier](classifier.md) | none | - | accuracy | - | **no published result** "
        "| [testbeds](../benchmarks/results/testbeds.md) | `python -m "
    )
    assert row in page and "run testbeds --publish` |" in page  # the command as recorded
    assert page.startswith("---\nhide:\n")  # front matter: the table gets the page's width


@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=5), min_size=1, max_size=4))
def test_across_pools_every_result(lists: list[list[float]]) -> None:
    """A number read across results is the reduction over all their values together."""
    names = tuple(f"r{i}" for i in range(len(lists)))
    results = {name: {"v": values} for name, values in zip(names, lists, strict=True)}
    low = Number("low", across(min, lambda result: result["v"]), ".0f", across=names)
    high = Number("high", across(max, lambda result: result["v"]), ".0f", across=names)
    pooled = [value for values in lists for value in values]
    assert low.read(results, "r0") == min(pooled)
    assert high.read(results, "r0") == max(pooled)


def test_files_list_the_claims_result_then_each_numbers_once() -> None:
    """The claim's own result first, then other and pooled results, without repeats."""
    numbers = (
        Number("a", at("a"), ".0f", result="b"),
        Number("b", across(min, lambda r: [1.0]), ".0f", across=("b", "c", "own")),
    )
    assert Claim("s", "p", "c", "m", "own", numbers=numbers).files() == ["own", "b", "c"]


def test_solver_speedups_read_both_file_layouts() -> None:
    """One run per family (older files) or one per solver setting and evaluation memory."""
    result = {
        "results": {
            "old": {"matched": {"wall_seconds": 6.0}, "fsnet": {"batch_seconds": 2.0}},
            "new": {
                "matched": {"slsqp warm": {"wall_seconds": 12.0}},
                "fsnet": {"30": {"batch_seconds": 4.0}, "5": {"batch_seconds": 3.0}},
            },
        }
    }
    assert solver_speedups(result) == [3.0, 3.0, 4.0]


def history(distances: list[float], calls: list[float]) -> list[dict[str, float]]:
    """A method's log: distance to the saddle and oracle calls per node."""
    return [
        {"distance": d, "evaluations_per_node": c} for d, c in zip(distances, calls, strict=True)
    ]


def test_diverse_savings_use_the_relative_target_and_the_cheaper_baseline() -> None:
    """Calls at the first point within 1e-8 of the start's distance; per network GT-EG with
    the mixing that needs fewer calls; a baseline that never gets there is left out."""
    start = [2.0, 1.5e-8, 1e-9]  # 1.5e-8: within 1e-8 of the start (2.0), not under 1e-8 itself
    result = {
        "cells": [
            {
                "methods": {
                    "diverse": {"history": history(start, [0, 10, 20])},
                    "gt_eg": {"history": history(start, [0, 300, 400])},
                    "gt_eg_fastmix": {"history": history(start, [0, 250, 600])},
                }
            },
            {
                "methods": {
                    "diverse": {"history": history(start, [0, 10, 50])},
                    "gt_eg": {"history": history([2.0, 1.0, 0.5], [0, 100, 200])},
                    "gt_eg_fastmix": {"history": history(start, [0, 200, 500])},
                }
            },
        ]
    }
    assert diverse_savings(result) == [25.0, 20.0]


def test_testbed_reads_its_row() -> None:
    """A testbed's number comes from its own row of the testbeds result."""
    result = {"rows": [{"testbed": "a", "test": {"acc": 0.5}}, {"testbed": "b", "seconds": 3}]}
    assert of_testbed("a", "test", "acc")(result) == 0.5
    assert of_testbed("b", "seconds")(result) == 3.0
