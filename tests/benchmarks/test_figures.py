"""Benchmark figures: drawn off-screen, saved as PNG."""

from __future__ import annotations

from pathlib import Path

from optiforge.benchmarks.figures import new_figure, save


def test_save_writes_a_png_into_new_folders(tmp_path: Path) -> None:
    """`save` creates the folders and writes a PNG of the figure's grid of panels."""
    figure = new_figure(2, rows=3)
    assert len(figure.axes) == 6
    path = save(figure, tmp_path / "a" / "b.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
