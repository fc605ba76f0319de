"""The repeated-leaf count of configs (tests/config_leaves.py) and its bound on configs/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.config_leaves import config_trees, leaves, repetition, report, share

# The share of leaf settings that repeat another file's, over configs/: 0.77 (696 / 900) when
# every experiment was one file or a base with one overlay; composed by axis it may not pass this.
MAX_REPEATED_SHARE = 0.40


def test_repetition_counts_a_small_set_by_hand() -> None:
    """a and b both set x = 1 (repeated in each), not y (different values) nor c's list entries;
    a list of mappings counts its length and each entry's leaves."""
    trees = {
        "a.yaml": {"x": 1, "y": 2},
        "b.yaml": {"x": 1, "y": 3},
        "c.yaml": {"z": [{"class_path": "k"}], "x": "1"},
    }
    counts = repetition(trees)
    assert counts == {"a.yaml": (1, 2), "b.yaml": (1, 2), "c.yaml": (0, 3)}
    assert share(list(counts.values())) == 2 / 7


def test_an_empty_file_has_no_leaves() -> None:
    """A YAML file holding only comments parses to None and counts nothing."""
    assert repetition({"a.yaml": None, "b.yaml": {"x": 1}}) == {"a.yaml": (0, 0), "b.yaml": (0, 1)}
    assert share([]) == 0.0


TREES = st.dictionaries(
    st.from_regex(r"[a-z]{1,4}", fullmatch=True),
    st.integers(0, 3) | st.dictionaries(st.sampled_from("pq"), st.integers(0, 3), min_size=1),
    min_size=1,
    max_size=4,
)


@given(tree=TREES, other=TREES)
def test_a_copied_file_repeats_every_leaf(tree: dict[str, Any], other: dict[str, Any]) -> None:
    """A file alone repeats nothing; beside an exact copy of itself every leaf is repeated,
    whatever a third file holds."""
    assert repetition({"a.yaml": tree}) == {"a.yaml": (0, len(leaves(tree)))}
    counts = repetition({"a.yaml": tree, "copy.yaml": tree, "other.yaml": other})
    assert counts["a.yaml"] == counts["copy.yaml"] == (len(leaves(tree)),) * 2


def test_configs_repeat_at_most_the_allowed_share_of_their_settings() -> None:
    """At most 40 % of the leaf settings under configs/ repeat one set in another file (each
    value lives in one file of its axis: testbed, optimizer, phase, problem ...)."""
    counts = list(repetition(config_trees()).values())
    assert sum(total for _, total in counts) > 300  # the walk finds every config
    assert share(counts) <= MAX_REPEATED_SHARE, report()


def test_report_has_a_line_per_folder_and_the_total(tmp_path: Path) -> None:
    """The report of two folders sharing one setting: each folder's line and the overall one."""
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "a.yaml").write_text("x: 1\ny: 2\n")
    (tmp_path / "b.yaml").write_text("x: 1\n")
    lines = report(tmp_path).splitlines()
    assert [line.split() for line in lines] == [
        [".", "1", "/", "1", "1.00"],
        ["f", "1", "/", "2", "0.50"],
        ["all", "2", "/", "3", "0.67"],
    ]
