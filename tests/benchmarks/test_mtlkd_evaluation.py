"""The MTL-KD evaluation benchmark end to end on tiny models, sets and budgets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from optiforge.benchmarks.harness import cli
from optiforge.lightning_modules import MTLKDStudent, POMOTeacher
from optiforge.lightning_modules.mtlkd.policy_weights import save_weights
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS

SUITE = ["--size", "8", "--instances", "3", "--seen-iterations", "20", "--unseen-iterations", "20"]


def evaluate(tmp_path: Path, arguments: list[str]) -> None:
    """The benchmark with the tiny models saved in `tmp_path`, its suite sets and one thread."""
    models = ["--student", str(tmp_path / "s.pt"), "--mtpomo", str(tmp_path / "m.pt")]
    cache = ["--threads", "1", "--cache-dir", str(tmp_path / "cache")]
    cli.main(["run", "mtlkd_evaluation", *models, *SUITE, *cache, *arguments])


def test_every_part_writes_validated_tables(tmp_path: Path) -> None:
    """Every part but the real VRPB / VRPTW instances runs (those are n >= 523, minutes even for
    tiny models; they go through the same `real_instances` as CVRPLIB's Set X, run here on
    X-n101, and their files' loading is tests/problems/vrp/test_cvrplib.py's): every solution is
    feasible, gaps to PyVRP are >= 0 for untrained models, R3C's gap never increases with the
    budget, Set X reports gaps to BKS."""
    torch.manual_seed(0)
    save_weights(
        MTLKDStudent(embed_dim=16, decoder_layers=1, num_heads=4, ff_dim=32), tmp_path / "s.pt"
    )
    save_weights(POMOTeacher(embed_dim=16, num_layers=1, num_heads=4, ff_dim=32), tmp_path / "m.pt")
    out = tmp_path / "results"
    evaluate(
        tmp_path,
        ["--r3c-instances", "3", "--r3c-budgets", "2", "5", "--segment", "2", "4"]
        + ["--augment-instances", "2", "--large-r3c", "5"]
        + ["--general-variants", "VRPTW", "--general-sizes", "12", "--general-instances", "2"]
        + ["--general-iterations", "20", "--x-instances", "1"]
        + ["--parts", "suite", "r3c", "generalization", "cvrplib"]
        + ["--out", str(out)],
    )
    suite = json.loads((out / "mtlkd_suite_n8.json").read_text())
    assert suite["provenance"]["command"].startswith("python -m optiforge.benchmarks run")
    assert list(suite["rows"]) == list(ALL_VARIANTS)
    assert {p.name for p in out.glob("*.png")} == {"mtlkd_r3c_n8.png", "mtlkd_generalization.png"}
    for name, by_method in suite["rows"].items():
        expected = {"student greedy", "MTPOMO greedy", "MTPOMO x8 aug"}
        assert set(by_method) == expected | ({"teacher x8 aug"} if name in SEEN_VARIANTS else set())
        for row in by_method.values():
            assert row["feasible"] == 1.0 and row["gap"] > -1e-6
    assert set(suite["means"]) == {"seen", "unseen"}
    curve = json.loads((out / "mtlkd_r3c_n8.json").read_text())["rows"]
    for row in curve.values():
        gaps = [row[f"gap@{budget}"] for budget in (0, 2, 5)]
        assert np.all(np.diff(gaps) <= 1e-9) and row["feasible@5"] == 1.0
    general = json.loads((out / "mtlkd_generalization.json").read_text())["rows"]
    assert list(general) == ["VRPTW/n12"]
    assert (
        general["VRPTW/n12"]["student + R3C 5"]["gap"]
        <= general["VRPTW/n12"]["student greedy"]["gap"] + 1e-9
    )
    real = json.loads((out / "mtlkd_cvrplib.json").read_text())
    assert list(real["rows"]) == ["CVRP/X-n101-k25"] and list(real["bands"]) == ["X n 0-250"]
    x = real["rows"]["CVRP/X-n101-k25"]
    assert x["bks"] == 27591 and x["student greedy"]["gap"] > 0
    assert (out / "mtlkd_cvrplib.md").read_text().count("|") > 10
    assert not (out / "mtlkd_real.json").exists()
    evaluate(
        tmp_path,
        ["--parts", "suite", "--augment-instances", "0", "--out", str(tmp_path / "greedy_only")],
    )
    greedy_only = json.loads((tmp_path / "greedy_only" / "mtlkd_suite_n8.json").read_text())
    assert all(set(r) == {"student greedy", "MTPOMO greedy"} for r in greedy_only["rows"].values())
    assert (
        greedy_only["means"]["seen"]["student greedy"] == suite["means"]["seen"]["student greedy"]
    )
