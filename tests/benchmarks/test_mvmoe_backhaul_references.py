"""The backhaul reference script on a tiny VRPB folder written in MVMoE's format."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from optiforge.benchmarks.harness import cli


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(value))


def test_counts_published_solutions_as_given_and_as_a_set(tmp_path: Path) -> None:
    """Two copies of one 3-customer VRPB instance (customer 1 picks up 4, customers 2 and 3
    deliver 6 and 3, capacity 10): the published backhaul-only route first passes only as a set,
    the other order passes as given; the search finds the one-route optimum 0-3-2-1-0 (3, 2
    delivered first, then the pickup), better than both."""
    instance = ([[0.0, 0.0]], [[0.2, 0.0], [0.4, 0.0], [0.4, 0.2]], [-4.0, 6.0, 3.0], 10.0)
    data = tmp_path / "data"
    _write(data / "VRPB" / "vrpb3_uniform.pkl", [instance, instance])
    _write(
        data / "VRPB" / "or_tools_vrpb3_uniform.pkl",
        [(np.float64(1.0), [1, 0, 2, 3]), (np.float64(1.0), [2, 3, 0, 1])],
    )
    out = tmp_path / "results"
    argv = ["--mvmoe-data", str(data), "--variants", "VRPB", "--size", "3", "--instances", "2"]
    argv += ["--iterations", "20", "--rounds", "20", "--no-models", "--out", str(out)]
    cli.main(["run", "mvmoe_backhaul_references", *argv])
    row = json.loads((out / "mvmoe_backhaul_references_n3.json").read_text())["rows"]["VRPB"]
    assert row["published valid as given"] == 1 and row["published valid as a set"] == 2
    assert row["reference worse than published"] == 0
    assert row["PyVRP + search mean"] <= row["PyVRP repaired mean"] + 1e-12
    table = (out / "mvmoe_backhaul_references_n3.md").read_text()
    assert "| published valid as given | 1 |" in table
    assert row["PyVRP + search mean"] == pytest.approx(0.2 + 0.2 + 0.2 + np.hypot(0.4, 0.2))


def test_missing_data_folder_stops_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without MVMoE's files: one usage line naming the option, before any work."""
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "mvmoe_backhaul_references", "--mvmoe-data", str(tmp_path / "none")])
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--mvmoe-data: no such file or folder" in last
