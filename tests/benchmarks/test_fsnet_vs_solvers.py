"""FSNet vs solvers: the matched setting and the solver summary the docs' ratios rest on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from optiforge.benchmarks.fsnet_vs_solvers import batch_sizes, matched_setting, solvers_for, summary
from optiforge.benchmarks.harness.cli import main
from optiforge.problems.constrained import ProblemSpec
from optiforge.problems.constrained.parametric_solvers import ParametricRun
from optiforge.problems.constrained.reference_solvers import ReferenceSolutions


def solver_row(wall: float, feasible: float, gap: float) -> dict[str, float]:
    """The fields of one solver setting that `matched_setting` reads."""
    return {"wall_seconds": wall, "feasible": feasible, "gap_mean": gap}


def test_matched_is_the_fastest_feasible_setting_within_the_gap() -> None:
    """Infeasible settings and those with a larger mean gap are skipped, however fast."""
    row = {
        "solvers": {
            "slsqp 0.0001 cold": solver_row(1.0, 0.5, 1e-8),
            "slsqp default warm": solver_row(3.0, 1.0, 2e-3),
            "slsqp default cold": solver_row(4.0, 1.0, 1e-8),
            "slsqp 1e-09 cold": solver_row(9.0, 1.0, 1e-12),
        }
    }
    assert matched_setting(row, gap=1e-3)[0] == "slsqp default cold"
    assert matched_setting(row, gap=2e-3)[0] == "slsqp default warm"
    assert matched_setting(row, gap=1e-13) is None


def test_summary_gaps_are_relative_to_the_reference_and_skip_missing_points() -> None:
    """gap = (f - f*) / |f*| per instance; an instance without a point (NaN) is left out."""
    objectives = np.array([-1.5, 2.2, np.nan])
    reference = np.array([-2.0, 2.0, 1.0])
    solutions = ReferenceSolutions(
        solver="slsqp",
        tolerance=1e-6,
        solutions=np.zeros((3, 2)),
        objectives=objectives,
        max_eq_violation=np.array([1e-9, 2e-8, np.inf]),
        max_ineq_violation=np.array([0.0, 3e-7, np.inf]),
        solver_success=np.array([True, True, False]),
        feasible=np.array([True, True, False]),
        solve_times=np.ones(3),
    )
    run = ParametricRun(solutions=solutions, wall_seconds=5.0, setup_seconds=0.5, workers=1)
    result = summary(run, reference)
    assert result["gap_mean"] == pytest.approx((0.25 + 0.1) / 2)
    assert result["gap_max"] == pytest.approx(0.25)
    assert result["feasible"] == pytest.approx(2 / 3)
    assert result["max_ineq"] == np.inf
    assert (result["wall_seconds"], result["setup_seconds"]) == (5.0, 0.5)


@pytest.mark.parametrize(
    ("name", "solvers"),
    [
        ("convex_qp", ["osqp", "clarabel"]),
        ("convex_qcqp", ["cvxpy"]),
        ("convex_socp", ["cvxpy"]),
        ("nonconvex_socp", ["slsqp"]),
        ("nonsmooth_qp", ["slsqp"]),
    ],
)
def test_each_family_gets_the_solvers_that_take_it(name: str, solvers: list[str]) -> None:
    """QPs go to the QP solvers, other convex families to cvxpy, nonconvex ones to SLSQP."""
    family = ProblemSpec(name, num_vars=6, num_eq=2, num_ineq=2).build()
    assert solvers_for(family) == solvers


def test_batch_sizes_are_capped_at_the_instances_solved() -> None:
    """With 5 of 8 references accepted, a requested batch of 8 is timed (and divided) as 5."""
    assert batch_sizes([1, 8], available=5) == [1, 5]
    assert batch_sizes([1, 32, 1024], available=1024) == [1, 32, 1024]
    assert batch_sizes([4, 16], available=3) == [3]


def test_tiny_run_writes_consistent_tables(tmp_path: Path) -> None:
    """The smoke preset, a 6-variable convex QP: FSNet and every OSQP / Clarabel setting are
    timed on the same instances, and the matched setting's ratio is its time over FSNet's."""
    smoke = ["run", "fsnet_vs_solvers", "--preset", "smoke", "--out", str(tmp_path)]
    main([*smoke, "--cache-dir", str(tmp_path / "cache")])
    row = json.loads((tmp_path / "fsnet_vs_solvers.json").read_text())["results"]["convex_qp"]
    assert row["test_instances"] + row["rejected_references"] == 4
    assert row["batch_sizes"] == [1, row["test_instances"]]
    assert {key.split()[0] for key in row["solvers"]} == {"osqp", "clarabel"}
    fsnet = row["fsnet"]["5"]
    assert fsnet["feasible_rate"] == 1.0
    if "matched" in fsnet:
        matched = row["solvers"][fsnet["matched"]]
        assert matched["feasible"] == 1.0
        assert matched["gap_mean"] <= fsnet["objective_gap_mean"]
    text = (tmp_path / "fsnet_vs_solvers.md").read_text()
    assert f"{row['test_instances']} test instances solved" in text
