"""How benchmark figures are drawn and saved: the PNGs the docs pages show (a published run
saves them in docs/figures, any other run beside its results: `Run.figure`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
