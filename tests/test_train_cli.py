"""`python train.py` end to end, W&B offline records, and fail-fast errors on bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from tests.cli_helpers import DEFAULT_CONFIG, run_cli, run_train_py
from tests.wandb_offline_reader import artifact_names, config_keys, history_values, read_records


@pytest.mark.slow
def test_no_arguments_trains_and_reports_test_accuracy(tmp_path: Path) -> None:
    """The bare command fits the default experiment and prints a test accuracy >= 0.95."""
    result = run_train_py(cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    match = re.search(r"test/acc = ([0-9.]+)", output)
    assert match, output[-3000:]
    assert float(match.group(1)) >= 0.95
    assert "fit done:" in output and "best val/acc=" in output


@pytest.mark.slow
def test_wandb_offline_run_records_config_metrics_and_checkpoint(tmp_path: Path) -> None:
    """Offline W&B writes a run file holding the config, git commit, metrics and model artifact."""
    result = run_train_py(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--trainer.max_epochs",
        "2",
        cwd=tmp_path,
        env={"WANDB_MODE": "offline"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "W&B: offline by request" in result.stdout + result.stderr
    runs = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    records = read_records(next(runs[0].glob("run-*.wandb")))
    assert {"model", "data", "optimizer", "trainer", "git_commit"} <= config_keys(records)
    val_acc = history_values(records, "val/acc")
    assert len(val_acc) == 2 and all(0.0 <= v <= 1.0 for v in val_acc)
    assert len(history_values(records, "test/acc")) == 1
    assert any(name.startswith("model-") for name in artifact_names(records))
    assert (runs[0] / "files" / "lightning_config.yaml").is_file()


def test_validate_test_predict_from_checkpoint(in_tmp_dir: Path) -> None:
    """After a short fit, `validate`, `test` and `predict` load last.ckpt and agree on accuracy."""
    common = ["--config", str(DEFAULT_CONFIG), "--trainer.logger", "false"]
    checkpoints = in_tmp_dir / "ckpt"
    run_cli(
        "fit",
        *common,
        "--trainer.max_epochs",
        "6",
        "--test_after_fit",
        "false",
        "--checkpoint.dirpath",
        str(checkpoints),
    )
    last = ["--ckpt_path", str(checkpoints / "last.ckpt")]
    validated = run_cli("validate", *common, *last).trainer.callback_metrics
    tested = run_cli("test", *common, *last).trainer.callback_metrics
    assert float(validated["val/acc"]) > 0.8
    assert float(tested["test/acc"]) > 0.8
    predictor = run_cli("predict", *common, *last)
    predictions = torch.cat(predictor.trainer.predict_loop.predictions)
    labels = predictor.datamodule.splits["test"].tensors[1]
    accuracy = (predictions == labels).float().mean().item()
    assert accuracy == pytest.approx(float(tested["test/acc"]), abs=1e-6)


BAD_INPUTS = {
    "unknown key": (["--model.init_args.no_such_option", "3"], "no_such_option"),
    "wrong type": (["--data.init_args.batch_size", "many"], "batch_size"),
    "negative lr": (["--optimizer.init_args.lr", "-0.1"], "optimizer.init_args.lr"),
    "missing data path": (
        [
            "--data",
            "datamodules.CompasDataModule",
            "--data.path",
            "/nonexistent/compas.csv",
        ],
        "data.path",
    ),
    "bad value": (["--data.init_args.label_noise", "1.5"], "data.label_noise"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_fails_fast_naming_the_field(
    case: str, in_tmp_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each bad value exits with status 2, names the field, and writes nothing."""
    arguments, field = BAD_INPUTS[case]
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", "--config", str(DEFAULT_CONFIG), *arguments)
    assert exit_info.value.code == 2
    assert field in capsys.readouterr().err
    assert list(in_tmp_dir.iterdir()) == []
