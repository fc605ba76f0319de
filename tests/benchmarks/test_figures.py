"""Benchmark figures go to docs/figures for the default results folder, else beside the results."""

from __future__ import annotations

from pathlib import Path

from optiforge.benchmarks.figures import FIGURES, RESULTS, figure_dir, new_figure, save


def test_default_results_draw_into_docs_figures(tmp_path: Path) -> None:
    """The documented figures come from default runs; any other output folder keeps its own."""
    assert figure_dir(RESULTS) == FIGURES == RESULTS.parents[1] / "docs" / "figures"
    assert figure_dir(tmp_path) == tmp_path


def test_save_writes_a_png_into_new_folders(tmp_path: Path) -> None:
    """`save` creates the folders and writes a PNG of the figure's grid of panels."""
    figure = new_figure(2, rows=3)
    assert len(figure.axes) == 6
    path = save(figure, tmp_path / "a" / "b.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
