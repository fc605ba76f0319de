"""The Hephaestus benchmark's smoke run writes a consistent table; bad sweeps are refused."""

from __future__ import annotations

import json

import pytest

from optiforge.benchmarks.harness.cli import parse
from tests.benchmarks.smoke_run import run_smoke


@pytest.mark.slow
def test_benchmark_writes_checked_phase_results(tmp_path) -> None:
    """Smoke preset: every phase feasible, within LP/greedy bounds, rows in the table."""
    run_smoke("hephaestus", tmp_path)
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
        parse(["run", "hephaestus", "--sweep", "grid:100"])
    assert "graph model in ('erdos_renyi', 'barabasi_albert')" in capsys.readouterr().err
