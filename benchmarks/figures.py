"""Where benchmark figures go and how they are saved: the PNGs the docs pages show.

A benchmark run with its default `--output-dir` (benchmarks/results) draws its figures into
docs/figures, where the system pages link them; a run into another directory (a test, a trial)
draws next to its own results, so it never overwrites the documented figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FIGURES = ROOT / "docs" / "figures"


def figure_dir(output_dir: Path) -> Path:
    """docs/figures for the default results directory, else `output_dir` itself."""
    return FIGURES if output_dir.resolve() == RESULTS else output_dir


def new_figure(columns: int, rows: int = 1, width: float = 6.0, height: float = 4.5) -> Figure:
    """A figure of `rows` x `columns` panels, drawn off-screen (no display needed)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width * columns, height * rows))
    figure.subplots(rows, columns, squeeze=False)
    return figure


def save(figure: Figure, path: Path) -> Path:
    """Write `figure` as a PNG at `path` (folders created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path
