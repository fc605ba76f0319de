"""The MTL-KD figures plot exactly the evaluation's gaps: R3C budget curve and size sweep."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import matplotlib.image
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.benchmarks.harness.cli import main
from optiforge.benchmarks.mtlkd_figures import (
    HISTORY,
    draw_from_json,
    draw_gap_vs_hours,
    draw_generalization,
    draw_r3c_budget,
)

gaps = st.floats(0.0, 500.0)
BUDGETS = [10, 25]


def r3c_payload(values: list[list[float]]) -> dict:
    """R3C results of CVRP (seen), VRPLTW and OVRPB (unseen): gaps at 0, 10 and 25 rounds."""
    names = ["CVRP", "VRPLTW", "OVRPB"]
    rows = {
        name: {f"gap@{b}": gap for b, gap in zip([0, *BUDGETS], row, strict=True)}
        for name, row in zip(names, values, strict=True)
    }
    return {"config": {"size": 50, "r3c_instances": 64}, "rows": rows, "budgets": BUDGETS}


def general_payload(values: list[float]) -> dict:
    """Size-sweep results of two variants at n = 100 and 200, two methods each."""
    keys = ["CVRP/n100", "CVRP/n200", "VRPTW/n100", "VRPTW/n200"]
    rows = {
        key: {"student greedy": {"gap": values[2 * i]}, "MTPOMO greedy": {"gap": values[2 * i + 1]}}
        for i, key in enumerate(keys)
    }
    return {"config": {"size": 50}, "rows": rows}


def lines(ax) -> dict:
    """gid -> (x, y) of every line of a panel."""
    return {ln.get_gid(): (list(ln.get_xdata()), list(ln.get_ydata())) for ln in ax.get_lines()}


@given(st.lists(st.lists(gaps, min_size=3, max_size=3), min_size=3, max_size=3))
def test_r3c_curve_is_the_mean_gap_per_budget(values) -> None:
    """Each variant's line is its gaps; the means are over all, the seen and the unseen ones."""
    drawn = lines(draw_r3c_budget(r3c_payload(values)).axes[0])
    assert drawn["variant/VRPLTW"] == ([0, 10, 25], values[1])
    assert drawn["seen"] == ([0, 10, 25], values[0])
    x, y = drawn["all"]
    assert x == [0, 10, 25]
    assert y == pytest.approx([statistics.mean(column) for column in zip(*values, strict=True)])
    assert drawn["unseen"][1] == pytest.approx(
        [(a + b) / 2 for a, b in zip(*values[1:], strict=True)]
    )


@given(st.lists(gaps.filter(lambda g: g > 0), min_size=8, max_size=8))
def test_generalization_panels_hold_the_gaps_by_size(values) -> None:
    """One panel per variant, x = customers, y = that method's gap at that size."""
    figure = draw_generalization(general_payload(values))
    visible = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["CVRP", "VRPTW"]
    drawn = lines(visible[1])
    assert drawn["student greedy"] == ([100, 200], [values[4], values[6]])
    assert drawn["MTPOMO greedy"] == ([100, 200], [values[5], values[7]])


def test_labels_say_what_and_in_which_units() -> None:
    """Axes name the R3C rounds, customers and the gap in percent; every panel has a legend."""
    r3c = draw_r3c_budget(r3c_payload([[3.0, 2.0, 1.0]] * 3)).axes[0]
    assert r3c.get_xlabel() == "R3C rounds (0 = greedy decoding)" and "(%)" in r3c.get_ylabel()
    assert "n = 50" in r3c.get_title()
    general = draw_generalization(general_payload([5.0] * 8))
    assert general.axes[0].get_xlabel() == "customers n (log scale)"
    assert "%" in general.axes[0].get_ylabel() and general.axes[0].get_legend() is not None


def test_entry_point_draws_every_figure_from_json(tmp_path: Path) -> None:
    """`python -m optiforge.benchmarks run mtlkd_figures` draws the r3c and size figures, skips
    others."""
    (tmp_path / "mtlkd_r3c_n50.json").write_text(json.dumps(r3c_payload([[3.0, 2.0, 1.0]] * 3)))
    (tmp_path / "mtlkd_generalization.json").write_text(json.dumps(general_payload([5.0] * 8)))
    (tmp_path / "mtlkd_suite_n50.json").write_text("{}")
    out = tmp_path / "run"
    run = main(["run", "mtlkd_figures", "--results-dir", str(tmp_path), "--out", str(out)])
    drawn = [path for path in run.written if path.suffix == ".png"]
    stems = ["mtlkd_generalization", "mtlkd_r3c_n50", "mtlkd_gap_vs_hours"]
    assert drawn == [out / f"{stem}.png" for stem in stems]
    record = json.loads((out / "mtlkd_figures.json").read_text())
    assert list(record["figures"]) == [f"{stem}.png" for stem in stems]
    assert record["figures"]["mtlkd_r3c_n50.png"].endswith("mtlkd_r3c_n50.json")
    assert record["provenance"]["command"].startswith(
        "python -m optiforge.benchmarks run mtlkd_figures"
    )
    assert all(matplotlib.image.imread(path).shape[1] > 500 for path in drawn)
    assert draw_from_json(tmp_path / "mtlkd_suite_n50.json", out) is None


def test_entry_point_without_results_names_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder with no MTL-KD results ends in one error naming the option."""
    with pytest.raises(ValueError, match="results_dir: no mtlkd_r3c_n"):
        main(["run", "mtlkd_figures", "--results-dir", str(tmp_path), "--out", str(tmp_path)])


def test_gap_vs_hours_draws_each_shipped_models_history() -> None:
    """One line per model of the shipped training history, its points in order of hours; every
    teacher improved with more hours (the history holds only shipped, improving files)."""
    history = json.loads(HISTORY.read_text())
    drawn = lines(draw_gap_vs_hours(history).axes[0])
    assert set(drawn) == {point["model"] for point in history["points"]}
    for model, (hours, gap) in drawn.items():
        points = sorted((p["hours"], p["gap"]) for p in history["points"] if p["model"] == model)
        assert list(zip(hours, gap, strict=True)) == points
        assert all(b < a for a, b in zip(gap, gap[1:], strict=False)), model
