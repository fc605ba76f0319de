"""The Hephaestus benchmark runs end to end at toy size and writes a consistent table."""

from __future__ import annotations

import json

import pytest

from benchmarks import hephaestus


@pytest.mark.slow
def test_benchmark_writes_checked_phase_results(tmp_path) -> None:
    """Tiny benchmark run: every phase feasible, within LP/greedy bounds, rows in the table."""
    hephaestus.main(
        [
            *("--functions", "linear", "--seeds", "1", "--num-nodes", "30"),
            *("--edge-probability", "0.15", "--train-size", "8", "--test-size", "2"),
            *("--batch-size", "4", "--forge-epochs", "1", "--morph-epochs", "1"),
            *("--refine-epochs", "1", "--samples", "2", "--output-dir", str(tmp_path)),
            *("--sweep", "barabasi_albert:20", "--sweep-size", "2"),
        ]
    )
    payload = json.loads((tmp_path / "hephaestus.json").read_text())
    summary = payload["results"]["linear"]["summary"]
    phases = ("forge", "morph", "refine")
    assert set(summary) == {*phases, *(f"{p}_barabasi_albert_20" for p in phases)}
    for phase in summary.values():
        assert phase["feasible"] == 1.0
        assert phase["budget_ratio_lp"] >= 1.0 - 1e-6  # the LP optimum is a lower bound
        assert phase["budget_ratio_greedy"] <= 1.0 + 1e-9  # PPS never loses to greedy
        assert phase["greedy_descent_ratio_lp"] >= 1.0 - 1e-6
    # each phase keeps the previous phase's candidates, so budgets never grow along the chain
    assert summary["morph"]["budget"] <= summary["forge"]["budget"] + 1e-6
    assert summary["refine"]["budget"] <= summary["morph"]["budget"] + 1e-6
    table = (tmp_path / "hephaestus.md").read_text()
    assert "| linear | synthetic | LP optimum |" in table
    assert "| linear | barabasi_albert_20 | refine |" in table
    assert "| linear | barabasi_albert_20 | tuned greedy + descent |" in table


def test_bad_sweep_entries_name_the_allowed_models(capsys) -> None:
    """An unknown --sweep graph model exits with an error listing the allowed models."""
    with pytest.raises(SystemExit):
        hephaestus.main(["--sweep", "grid:100"])
    assert "graph model in ('erdos_renyi', 'barabasi_albert')" in capsys.readouterr().err
