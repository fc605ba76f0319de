"""The Scion learning-rate sweep's smoke mode writes a complete, finite report."""

from __future__ import annotations

import json
import math
from pathlib import Path

from optiforge.benchmarks.scion_lr_optimizers import grid
from optiforge.benchmarks.scion_lr_sweep import stable_points
from tests.benchmarks.smoke_run import run_smoke

OPTIMIZERS = {"AdamW", "UnconstrainedScion", "UnconstrainedClippedScion", "Scion", "ClippedScion"}


def test_grid_and_stable_points() -> None:
    """Powers of two around the centre; stable = not diverged and <= tolerance x best."""
    assert grid(-5, 3) == [2.0**-6, 2.0**-5, 2.0**-4]
    assert grid(-5, 4) == [2.0**-7, 2.0**-6, 2.0**-5, 2.0**-4]
    losses = [1.0, 1.4, 1.6, 0.5, math.nan]
    assert stable_points(losses, [False, False, False, True, True], tolerance=1.5) == 2
    assert stable_points(losses, [True] * 5, tolerance=1.5) == 0


def test_quick_mode_writes_json_markdown_and_plot(tmp_path: Path) -> None:
    """The smoke preset (`--quick`) sweeps both tasks over 3 grid points; every loss is finite."""
    run_smoke("scion_lr_sweep", tmp_path)
    payload = json.loads((tmp_path / "scion_lr_sweep.json").read_text())
    assert payload["config"]["points"] == 3
    assert set(payload["results"]) == {"char_lm", "digits"}
    for task, by_optimizer in payload["results"].items():
        assert set(by_optimizer) == OPTIMIZERS
        for name, row in by_optimizer.items():
            assert len(row["lrs"]) == len(row["final_train_loss"]) == 3
            assert row["lrs"] == [2.0**k for k in row["log2_lrs"]]
            values = [row["initial_loss"], *row["final_train_loss"], *row["final_val_loss"]]
            assert all(isinstance(v, float) and math.isfinite(v) for v in values), (task, name)
            assert 0 <= row["stable_points_train"] <= 3
            assert (row["rho"] is not None) == ("Clipped" in name)
            assert len(row["curves_seed0"]) == 3
        assert by_optimizer["AdamW"]["initial_loss"] > 1.0  # cross-entropy near ln(classes)
    assert "| char_lm | ClippedScion |" in (tmp_path / "scion_lr_sweep.md").read_text()
    assert (tmp_path / "scion_lr_sweep.png").stat().st_size > 10_000
