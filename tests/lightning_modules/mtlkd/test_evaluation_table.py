"""The compact evaluation table of the MTL-KD models: a row per evaluation set, not per loader."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import pytest
import torch

from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules.mtlkd.evaluation_table import table_rows
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.teacher_module import POMOTeacher

VARIANTS = ["CVRP", "VRPTW", "OVRPB"]


def test_rows_group_the_logged_keys_by_set() -> None:
    """`split/<set>/<metric>` keys become one row per set in logged order, the `split/<metric>`
    totals the last row "all"; other splits and unknown metrics are ignored."""
    metrics = {
        "test/CVRP/n6/gap": torch.tensor(2.5),
        "test/CVRP/n6/cost": 3.0,
        "test/CVRP/X-n101-k25/gap": 1.0,
        "test/gap": 1.75,
        "val/CVRP/n6/gap": 9.0,
        "test/CVRP/n6/loss": 7.0,
    }
    assert table_rows(metrics, "test") == {
        "CVRP/n6": {"gap": 2.5, "cost": 3.0},
        "CVRP/X-n101-k25": {"gap": 1.0},
        "all": {"gap": 1.75},
    }


@pytest.mark.parametrize("model", ["teacher", "student"])
def test_test_prints_one_table_with_a_row_per_variant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str
) -> None:
    """`Trainer.test` of a tiny teacher / student over 3 variants prints one table (Lightning's
    per-dataloader tables are suppressed) whose rows are the 3 sets and "all", with the
    logged gaps; `verbose=False` prints nothing."""
    data = VRPDataModule(
        train_variants=VARIANTS,
        num_customers=5,
        test_instances=2,
        cache_dir=str(tmp_path / "cache"),
        reference_iterations=50,
    )
    torch.manual_seed(0)
    if model == "teacher":
        module = POMOTeacher(embed_dim=16, num_layers=1, num_heads=4, ff_dim=32)
    else:
        module = MTLKDStudent(embed_dim=16, decoder_layers=1, num_heads=4, ff_dim=32)
    trainer = L.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False)
    capsys.readouterr()
    results = trainer.test(module, datamodule=data)
    out = capsys.readouterr().out
    assert len(results) == 3  # the logged results themselves are unchanged
    assert "DataLoader" not in out and out.count(f"{type(module).__name__} test") == 1
    lines = [line for line in out.splitlines() if line.startswith("│")]  # body rows
    assert [line.split("│")[1].strip() for line in lines] == [
        *(f"{name}/n5" for name in VARIANTS),
        "all",
    ]
    metrics = trainer.callback_metrics
    for line, name in zip(lines, VARIANTS, strict=False):
        gap = float(line.split("│")[3])
        assert math.isclose(gap, float(metrics[f"test/{name}/n5/gap"]), rel_tol=1e-3, abs_tol=1e-3)
    trainer.test(module, datamodule=data, verbose=False)
    assert capsys.readouterr().out == ""


def test_validate_prints_the_same_compact_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Trainer.validate` (as `train.py validate`) prints one "val" table, a row per set."""
    data = VRPDataModule(
        train_variants=VARIANTS[:2],
        num_customers=5,
        val_instances=2,
        cache_dir=str(tmp_path / "cache"),
        reference_iterations=None,
    )
    torch.manual_seed(0)
    module = POMOTeacher(embed_dim=16, num_layers=1, num_heads=4, ff_dim=32)
    trainer = L.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False)
    capsys.readouterr()
    trainer.validate(module, datamodule=data)
    out = capsys.readouterr().out
    assert "DataLoader" not in out and out.count("POMOTeacher val") == 1
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert rows == ["CVRP/n5", "VRPTW/n5", "all"]
