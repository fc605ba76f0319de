"""One compact table of a VRP evaluation: a row per evaluation set, a column per metric.

Lightning prints one column per dataloader (16 variants -> 16 mostly empty columns over
several tables); the MTL-KD models print this table instead, from the logged
`<split>/<set>/<metric>` values, with the totals over all sets as the last row ("all").
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table
from torch import Tensor

COLUMNS: tuple[str, ...] = ("cost", "gap", "feasible", "ms_per_instance")
HEADERS = {"cost": "cost", "gap": "gap %", "feasible": "feasible", "ms_per_instance": "ms / inst"}


def table_rows(metrics: Mapping[str, Tensor | float], split: str) -> dict[str, dict[str, float]]:
    """Set name -> metric -> value of the `split/<set>/<metric>` keys of `metrics`, in logged
    order, then "all" from the `split/<metric>` totals (when logged)."""
    rows: dict[str, dict[str, float]] = {}
    totals: dict[str, float] = {}
    for key, value in metrics.items():
        head, _, rest = key.partition("/")
        if head != split:
            continue
        name, _, metric = rest.rpartition("/")
        if metric not in COLUMNS:
            continue
        target = rows.setdefault(name, {}) if name else totals
        target[metric] = float(value)
    if totals:
        rows["all"] = totals
    return rows


def evaluation_table(metrics: Mapping[str, Tensor | float], split: str, title: str) -> Table:
    """The rich table of `table_rows`; a value not logged for a set is left blank."""
    table = Table(title=title)
    table.add_column(f"{split} set", style="cyan")
    for column in COLUMNS:
        table.add_column(HEADERS[column], justify="right")
    for name, values in table_rows(metrics, split).items():
        cells = [f"{values[c]:.4g}" if c in values else "" for c in COLUMNS]
        table.add_row(name, *cells)
    return table


def print_evaluation_table(metrics: Mapping[str, Tensor | float], split: str, title: str) -> None:
    """Print `evaluation_table` to stdout (rich's console, as Lightning's own table)."""
    Console().print(evaluation_table(metrics, split, title))
