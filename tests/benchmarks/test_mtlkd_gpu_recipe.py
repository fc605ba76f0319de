"""The MTL-KD GPU recipe at smoke size on the CPU: every stage runs, its weights files load as
the models they claim, and the evaluation covers every variant."""

from __future__ import annotations

import json
import math
from pathlib import Path

from optiforge.benchmarks.harness.record import scrub_path
from optiforge.benchmarks.mtlkd_gpu_recipe import mvmoe_variants
from optiforge.lightning_modules.mtlkd.policy_weights import model_name, read_weights
from optiforge.problems.vrp.variants import SEEN_VARIANTS
from tests.benchmarks.smoke_run import run_smoke


def test_smoke_run_trains_exports_and_evaluates_every_model(tmp_path: Path) -> None:
    """Six teachers and a student, each exported with the command that trained it; the student's
    greedy gap on the preset's variants (two seen, one unseen) and the x8 gap of each of their
    teachers on its own, all finite."""
    run_smoke("mtlkd_gpu_recipe", tmp_path)
    payload = json.loads((tmp_path / "mtlkd_gpu_recipe.json").read_text())
    commands = payload["commands"]
    assert len(commands) == 6 + 1 + 1 + 2
    assert all(c.startswith("python train.py ") for c in commands)
    assert [c.split()[2] for c in commands] == ["fit"] * 7 + ["test"] * 3
    for index, name in enumerate(SEEN_VARIANTS):
        weights = read_weights(tmp_path / f"teacher_{name.lower()}_n10.pt")
        assert model_name(weights) == "POMOTeacher" and weights.metadata["variants"] == [name]
        assert weights.metadata["training_command"] == commands[index]  # no machine path
    student = read_weights(tmp_path / "student_n10.pt")
    assert model_name(student) == "MTLKDStudent"
    assert student.metadata["training_command"] == commands[6]
    assert "--config mtlkd/student_gpu_n100.yaml" in commands[6]
    assert f"teachers {{CVRP: {scrub_path(str(tmp_path))}/teacher_cvrp_n10.pt" in commands[6]
    rows = {row["variant"]: row for row in payload["rows"]}
    assert list(rows) == ["CVRP", "VRPTW", "OVRPB"]
    for name, row in rows.items():
        assert math.isfinite(row["student greedy"]) and row["student greedy"] > -1e-6
        assert ("teacher x8" in row) == (name in SEEN_VARIANTS)
    assert not any(path.suffix == ".ckpt" for path in tmp_path.rglob("*"))


def test_mvmoe_variants_are_those_with_a_test_file(tmp_path: Path) -> None:
    """Only variants whose `<VARIANT>/<variant><n>_uniform.pkl` exists, in the suite's order."""
    for name, size in (("VRPTW", 100), ("CVRP", 100), ("OVRP", 50)):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / f"{name.lower()}{size}_uniform.pkl").write_bytes(b"")
    assert mvmoe_variants(str(tmp_path), 100) == ["CVRP", "VRPTW"]
    assert mvmoe_variants(None, 100) == []
