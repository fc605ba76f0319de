"""The covering benchmark's smoke run gives radii consistent with the known optima."""

from __future__ import annotations

import json
from pathlib import Path

from optiforge.benchmarks import covering
from tests.benchmarks.smoke_run import run_smoke


def test_benchmark_writes_radii_never_below_the_known_optimum(tmp_path: Path) -> None:
    """Tiny run: every case present, no radius below the best known optimum, figures written,
    Nelder-Mead within its budget."""
    run_smoke("covering", tmp_path)
    payload = json.loads((tmp_path / "covering.json").read_text())
    assert [(r["set"], r["n"]) for r in payload["known"]] == covering.CASES
    assert len(payload["other"]) == len(covering.OTHER)
    for row in payload["known"]:
        assert row["smoothed"] >= row["known"] - 1e-9
        assert row["gonzalez"] >= row["known"] - 1e-9
    for row in payload["equal_budget"]:
        assert row["nelder_mead_evaluations"] <= row["evaluations"] == 10 * 3
    names = ("covering_square.png", "covering_disk.png", "covering_other_sets.png")
    assert all((tmp_path / name).is_file() for name in names)
