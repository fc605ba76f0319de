"""The Scion sweep figure plots exactly the sweep's losses and marks the diverged points."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.image
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.benchmarks import scion_lr_sweep
from optiforge.benchmarks.harness import cli
from optiforge.benchmarks.scion_lr_figure import COLORS, draw_lr_sweep

LRS = [2.0**-3, 2.0**-2, 2.0**-1]
losses = st.lists(st.floats(0.01, 10.0), min_size=3, max_size=3)


def payload(train: list[float], val: list[float], diverged: list[int]) -> dict:
    """A sweep result of one task, AdamW and ClippedScion on a 3-point grid."""
    row = {"lrs": LRS, "initial_loss": 11.0, "diverged_seeds": diverged}
    return {
        "config": {"seeds": 2, "rho_factor": 10.0},
        "results": {
            "toy": {
                "AdamW": {**row, "rho": None, "final_train_loss": train, "final_val_loss": val},
                "ClippedScion": {**row, "rho": 1.5, "final_train_loss": val, "final_val_loss": val},
            }
        },
    }


def lines(figure) -> dict:
    """gid -> (x, y) of every line of the figure's first panel."""
    return {
        line.get_gid(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in figure.axes[0].get_lines()
    }


@given(train=losses, val=losses, diverged=st.lists(st.integers(0, 2), min_size=3, max_size=3))
def test_plotted_points_are_the_sweep_values(train, val, diverged) -> None:
    """Train / val lines hold the losses at each lr, NaN where a seed diverged; crosses there."""
    drawn = lines(draw_lr_sweep(payload(train, val, diverged)))
    ok = [n == 0 for n in diverged]
    for gid, values in (("AdamW/train", train), ("AdamW/val", val), ("ClippedScion/train", val)):
        x, y = drawn[gid]
        assert x == LRS
        for got, want, good in zip(y, values, ok, strict=True):
            assert got == want if good else math.isnan(got)
    x, y = drawn["AdamW/diverged"]
    assert x == [lr for lr, good in zip(LRS, ok, strict=True) if not good]
    assert all(height >= 11.0 for height in y)  # above every loss, at the initial loss or higher


def test_labels_say_what_and_in_which_units() -> None:
    """Axes name the learning rate and the loss in nats; the title gives seeds and rho."""
    figure = draw_lr_sweep(payload([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0, 0, 1]))
    ax = figure.axes[0]
    assert "learning rate" in ax.get_xlabel() and "nats" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.get_title() == "toy: final loss vs learning rate"
    assert "2 seeds" in figure.get_suptitle() and "rho = 10 x" in figure.get_suptitle()
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels[:2] == ["AdamW", "ClippedScion"] and "diverged on a seed" in labels


def test_an_optimizer_keeps_its_colour_across_sweeps() -> None:
    """ClippedScion has one colour whether AdamW is drawn before it or not (the rho x10 sweep)."""
    both = payload([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0, 0, 0])
    alone = {**both, "results": {"toy": {"ClippedScion": both["results"]["toy"]["ClippedScion"]}}}
    for figure in (draw_lr_sweep(both), draw_lr_sweep(alone)):
        line = next(ln for ln in figure.axes[0].get_lines() if ln.get_gid() == "ClippedScion/train")
        assert line.get_color() == COLORS["ClippedScion"] == "C4"


def test_plot_only_redraws_from_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--plot-only` draws a readable PNG from the published JSON into the run's folder, no
    training."""
    monkeypatch.setattr(scion_lr_sweep, "RESULTS", tmp_path)
    stem, out = "sweep", tmp_path / "run"
    (tmp_path / f"{stem}.json").write_text(json.dumps(payload([1.0] * 3, [2.0] * 3, [0, 1, 0])))
    cli.main(["run", "scion_lr_sweep", "--plot-only", "--output-stem", stem, "--out", str(out)])
    height, width, _ = matplotlib.image.imread(out / f"{stem}.png").shape
    assert width > height > 300


def test_plot_only_without_results_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing JSON ends in one usage error naming the file, and nothing is written."""
    monkeypatch.setattr(scion_lr_sweep, "RESULTS", tmp_path)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(
            ["run", "scion_lr_sweep", "--plot-only", "--output-stem", "absent", "--out", str(out)]
        )
    assert exit_info.value.code == 2
    assert f"no sweep results at {tmp_path / 'absent.json'}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
