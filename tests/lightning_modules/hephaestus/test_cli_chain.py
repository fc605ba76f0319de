"""Forge -> Morph -> Refine through `train.py` at tiny sizes: each phase fits, tests after fit,
and Refine also tests from its checkpoint with `train.py test --ckpt_path`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import config_args, run_cli

TINY = [
    *("--trainer.max_epochs", "1", "--trainer.logger", "false"),
    *("--trainer.enable_progress_bar", "false", "--trainer.enable_model_summary", "false"),
    *("--data.init_args.num_nodes", "30", "--data.init_args.edge_probability", "0.15"),
    *("--data.init_args.train_size", "4", "--data.init_args.val_size", "2"),
    *("--data.init_args.test_size", "3", "--data.init_args.batch_size", "2"),
]
REFINE_TINY = [
    *("--model.init_args.search_particles", "2", "--model.init_args.search_steps", "4"),
    *("--model.init_args.repair_every", "2", "--model.init_args.descent_steps", "4"),
    *("--model.init_args.samples", "2"),
]


def phase_args(phase: str, folder: Path, weights: str | None) -> list[str]:
    """Tiny CLI arguments of one phase, its checkpoints in `folder`, its input weights set."""
    args = [*config_args("hephaestus/base", f"hephaestus/{phase}", "hephaestus/linear"), *TINY]
    args += ["--checkpoint.dirpath", str(folder / phase)]
    if weights is not None:
        args += [f"--model.init_args.{weights}_weights", str(folder / weights / "last.ckpt")]
    return args + (REFINE_TINY if phase == "refine" else [])


def test_phases_chain_through_train_py_and_test_feasible(in_tmp_dir: Path) -> None:
    """Every phase's test is feasible on every instance, within the LP bound, and each phase is
    never above the one it builds on; Refine's `test --ckpt_path` repeats its fit-time test."""
    metrics = {}
    for phase, weights in (("forge", None), ("morph", "forge"), ("refine", "morph")):
        cli = run_cli("fit", *phase_args(phase, in_tmp_dir, weights))
        metrics[phase] = {k: float(v) for k, v in cli.trainer.callback_metrics.items()}
    refine_args = phase_args("refine", in_tmp_dir, "morph")
    ckpt = ["--ckpt_path", str(in_tmp_dir / "refine" / "last.ckpt")]
    tested = run_cli("test", *refine_args, *ckpt).trainer.callback_metrics
    for phase, values in metrics.items():
        assert values["test/feasible"] == 1.0, phase
        assert values["test/budget_ratio_lp"] >= 1.0 - 1e-6, phase  # the LP is a lower bound
    assert metrics["morph"]["test/budget"] <= metrics["forge"]["test/budget"] + 1e-6
    assert metrics["refine"]["test/budget"] <= metrics["morph"]["test/budget"] + 1e-6
    assert float(tested["test/feasible"]) == 1.0
    assert float(tested["test/budget"]) == pytest.approx(metrics["refine"]["test/budget"])
