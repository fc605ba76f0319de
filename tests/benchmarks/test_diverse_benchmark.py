"""The DIVERSE benchmark at toy size: targets read off histories, files and rows written."""

from __future__ import annotations

import json
from pathlib import Path

from optiforge.benchmarks.diverse import METHODS, to_target
from tests.benchmarks.smoke_run import run_smoke


def test_to_target_reads_the_first_record_below_the_target() -> None:
    """Relative distance 1 -> 0.1 -> 1e-3: target 1e-2 is first met at the third record."""
    history = [{"distance": d, "communication": c} for d, c in ((2.0, 0), (0.2, 4), (2e-3, 8))]
    assert to_target(history, 1e-2, "communication") == 8
    assert to_target(history, 1e-4, "communication") is None


def test_benchmark_writes_tables_and_figures(tmp_path: Path) -> None:
    """Smoke preset (two nodes, ring): every method has a row and a history; DIVERSE is timed."""
    run_smoke("diverse", tmp_path)
    record = json.loads((tmp_path / "diverse.json").read_text())
    (cell,) = record["cells"]
    assert set(cell["methods"]) == set(METHODS)
    assert cell["methods"]["diverse"]["seconds_per_round"] > 0
    assert "seconds_per_round" not in cell["methods"]["gt_eg"]
    for run in cell["methods"].values():
        assert run["history"][-1]["distance"] < run["history"][0]["distance"]
    table = (tmp_path / "diverse.md").read_text()
    assert sum(line.startswith("| 2 | ring |") for line in table.splitlines()) == len(METHODS)
    assert (tmp_path / "diverse_ring_2.png").is_file()
