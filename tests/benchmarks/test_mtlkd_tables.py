"""Markdown tables of the MTL-KD evaluation, on hand-made results."""

from __future__ import annotations

import argparse

from optiforge.benchmarks.mtlkd_tables import markdown


def test_r3c_table_has_a_column_per_budget_and_the_worst_feasibility() -> None:
    """The R3C curve table: gaps rounded to 2 decimals per budget (0 = greedy), the lowest
    feasible share over the budgets, and the time at the largest budget."""
    row = {"gap@0": 5.123, "gap@10": 3.456, "feasible@0": 1.0, "feasible@10": 0.5, "ms@10": 7.25}
    text, columns, table = markdown(
        "r3c", {"rows": {"CVRP": row}, "budgets": [10]}, argparse.Namespace(size=50)
    )
    assert columns == ["variant", "gap % @0", "gap % @10", "feasible", "ms @max"]
    assert table == [["CVRP", 5.12, 3.46, 0.5, 7.2]]
    assert text.splitlines()[0] == "MTL-KD R3C budget curve: size=50"
    assert text.splitlines()[-1] == "| CVRP | 5.12 | 3.46 | 0.5 | 7.2 |"
