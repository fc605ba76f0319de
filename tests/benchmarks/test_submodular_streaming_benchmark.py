"""The streaming-submodular benchmark: its smoke run checks our bound on every stream, adversarial
ones included, and its helpers compute what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optiforge.algorithms.submodular_streaming import Stream, synthetic_stream
from optiforge.benchmarks import submodular_streaming
from optiforge.benchmarks.submodular_streaming import ADVERSARIAL, KINDS, bound_for, worst_table
from tests.benchmarks.smoke_run import run_smoke


def small_text(path: Path, num_topics: int, seed: int) -> Stream:
    """A stand-in for the Shakespeare stream (its topic model takes most of a smoke run)."""
    return synthetic_stream(300, num_topics, 1, seed)


def test_smoke_run_certifies_our_bound_and_shows_the_baselines_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stream kind is measured; ours certifies >= its proved bound in every cell; on the
    adversarial streams known-visits with the bound and the swap pool fall far below ours."""
    monkeypatch.setattr(submodular_streaming, "shakespeare_stream", small_text)
    run_smoke("submodular_streaming", tmp_path)
    payload = json.loads((tmp_path / "submodular_streaming.json").read_text())
    cells = payload["cells"]
    assert {c["stream"] for c in cells} == {*KINDS, *ADVERSARIAL, "synthetic_length"}
    assert payload["certified_at_least_proved"] is True
    for c in cells:
        ours = c["methods"]["on_demand"]
        assert ours["certified"] >= ours["proved"] > 0.0
    by_kind = {c["stream"]: c["methods"] for c in cells}
    assert by_kind["worst_first"]["known_visits_bound"]["ratio"] < 0.05
    assert by_kind["duplicates"]["swap_pool"]["ratio"] < 0.2
    assert by_kind["duplicates"]["linear_memory_capped"]["ratio"] < 0.2
    assert (tmp_path / "submodular_coverage_vs_visits.png").is_file()


def test_bound_for_and_worst_table() -> None:
    """ceil(ratio V) but never below V; the table takes minima per kind and the certified ratio."""
    assert bound_for(7, 2.0) == 14 and bound_for(7, 1.01) == 8 and bound_for(7, 0.5) == 7
    row = {"ratio": 1.0, "memory": 1}
    cells = [
        {
            "stream": "a",
            "methods": {
                "offline_greedy": row,
                "on_demand": {"ratio": r, "certified": r / 2, "proved": 0.2},
                "swap": {"ratio": w},
            },
        }
        for r, w in ((0.9, 0.5), (0.7, 0.6))
    ]
    lines = worst_table(cells).splitlines()
    assert lines[0] == "| stream | on_demand certified (>= proved) | on_demand | swap |"
    assert lines[2] == "| a | 0.350 (>= 0.200) | 0.700 | 0.500 |"
