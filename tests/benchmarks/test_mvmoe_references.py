"""The MVMoE reference table script on a tiny folder written in MVMoE's format."""

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


def test_table_counts_and_means(tmp_path: Path) -> None:
    """One CVRP set of 2 instances: a result file with one valid and one skipped customer
    gives reported mean 1.0, validated mean 1.4 (the square's tour), 1 valid, 1 rejected;
    a result file without its test file is listed."""
    square = ([[0.0, 0.0]], [[0.3, 0.0], [0.3, 0.4], [0.0, 0.4]], [3.0, 4.0, 2.0], 10.0)
    data = tmp_path / "data"
    _write(data / "CVRP" / "cvrp3_uniform.pkl", [square, square])
    _write(
        data / "CVRP" / "hgs_cvrp3_uniform.pkl",
        [(np.float64(1.4), [1, 2, 3]), (np.float64(0.6), [1, 2])],
    )
    _write(data / "CVRP" / "lkh_cvrp100_uniform.pkl", [])
    cli.main(
        ["run", "mvmoe_references", "--mvmoe-data", str(data), "--out", str(tmp_path / "results")]
    )
    payload = json.loads((tmp_path / "results" / "mvmoe_references.json").read_text())
    hgs, best = payload["rows"]
    assert hgs["solver"] == "hgs" and hgs["instances"] == 2
    assert hgs["reported_mean"] == pytest.approx(1.0)
    assert hgs["validated_mean"] == pytest.approx(1.4)
    assert hgs["max_abs_diff"] == pytest.approx(0.0, abs=1e-12)
    assert (hgs["valid"], hgs["rejected"], hgs["unsolved"]) == (1, 1, 0)
    assert hgs["reasons"] == {"visits": 1}
    assert best["solver"] == "best" and best["valid"] == 1
    assert payload["result_files_without_test_file"] == ["CVRP/lkh_cvrp100_uniform.pkl"]
    table = (tmp_path / "results" / "mvmoe_references.md").read_text()
    assert "| CVRP | 3 | 2 | hgs | 1.0000 | 1.4000 |" in table
