"""`python train.py` end to end, W&B offline records, and fail-fast errors on bad input."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge import cli as cli_module
from optiforge.cli import one_line
from tests.cli_helpers import CONFIG_DIR, DEFAULT_CONFIG, config_args, run_cli, run_train_py
from tests.test_configs import smoke_overrides
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


NOISE = ("deprecat", "anonymous", "Tip:", "Seed set to")


@pytest.mark.slow
def test_wandb_offline_run_records_config_metrics_and_checkpoint(tmp_path: Path) -> None:
    """Offline W&B writes a run file holding the config, git commit, metrics and model artifact;
    the run prints no deprecation, wandb "anonymous" warning, Lightning tip or seed line on
    stderr, and says where W&B writes offline."""
    result = run_train_py(
        "fit",
        *config_args("default"),
        *("--trainer.max_epochs", "2", "--trainer.limit_train_batches", "4"),
        *("--trainer.limit_val_batches", "2", "--trainer.limit_test_batches", "2"),
        cwd=tmp_path,
        env={"WANDB_MODE": "offline"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    noisy = [line for line in result.stderr.splitlines() if any(n in line for n in NOISE)]
    assert noisy == []
    output = result.stdout + result.stderr
    assert "W&B: offline by request" in output
    assert "wandb sync wandb/offline-run-" in output  # W&B's closing hint, plain text:
    assert "\x1b[" not in output  # no ANSI codes in redirected output
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
            "optiforge.datamodules.CompasDataModule",
            "--data.path",
            "/nonexistent/compas.csv",
        ],
        "data.path",
    ),
    "bad value": (["--data.init_args.label_noise", "1.5"], "data.label_noise"),
    "negative max_epochs": (["--trainer.max_epochs", "-5"], "trainer.max_epochs"),
    "zero check_val_every_n_epoch": (
        ["--trainer.check_val_every_n_epoch", "0"],
        "trainer.check_val_every_n_epoch",
    ),
    "negative step_size": (
        ["--lr_scheduler", "torch.optim.lr_scheduler.StepLR", "--lr_scheduler.step_size", "-1"],
        "lr_scheduler.init_args.step_size",
    ),
    "zero T_max": (
        ["--lr_scheduler", "torch.optim.lr_scheduler.CosineAnnealingLR"]
        + ["--lr_scheduler.T_max", "0"],
        "lr_scheduler.init_args.T_max",
    ),
    "negative gamma": (
        ["--lr_scheduler", "torch.optim.lr_scheduler.ExponentialLR"]
        + ["--lr_scheduler.gamma", "-0.5"],
        "lr_scheduler.init_args.gamma",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_fails_fast_naming_the_field(
    case: str, in_tmp_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Each bad value exits with status 2, names the field in one stderr line, writes nothing."""
    arguments, field = BAD_INPUTS[case]
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", "--config", str(DEFAULT_CONFIG), *arguments)
    assert exit_info.value.code == 2
    err = capfd.readouterr().err
    assert field in err
    assert len(err.strip().splitlines()) == 1, err
    assert list(in_tmp_dir.iterdir()) == []


@given(st.text(max_size=400))
def test_one_line_never_spans_lines(message: str) -> None:
    """Any parser message, however nested, is reported on a single line."""
    assert "\n" not in one_line(message) and "\r" not in one_line(message)


def test_one_line_joins_nested_parser_keys() -> None:
    """jsonargparse's nested type error becomes `<dotted key>: <reason>`."""
    message = (
        'Parser key "data":\n  Does not validate against any of the Union subtypes\n'
        "  Errors:\n    - Problem with given class_path 'optiforge.datamodules.DigitsDataModule':\n"
        "        Parser key \"batch_size\":\n          Expected a <class 'int'>. Got value: many\n"
        "    - Expected a <class 'NoneType'>\n  Given value type: <class 'str'>\n"
    )
    assert one_line(message) == "data.batch_size: Expected a <class 'int'>. Got value: many"


# Lines Lightning prints that say nothing about a run of this CLI (optiforge.cli explains why).
KNOWN_NOISE = ("will be overridden by", "`IterableDataset` has `__len__` defined", "Total FLOPs")


def noise_of_two_runs(capfd: pytest.CaptureFixture[str]) -> list[str]:
    """The known noise printed or warned by a FSNet fit (its module's own configure_optimizers
    replaced by the config's `optimizer`) and a VRP teacher fit (an iterable dataset with a
    length), each with a model summary that counted no FLOPs."""
    caps = ["--trainer.max_steps", "1", "--trainer.limit_val_batches", "1"]
    caps += ["--trainer.logger", "false", "--test_after_fit", "false"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for names in (("fsnet/base", "fsnet/convex_qp"), ("mtlkd/base", "mtlkd/teacher_cvrp")):
            files = [CONFIG_DIR / f"{name}.yaml" for name in names]
            run_cli("fit", *config_args(*names), *smoke_overrides(files), *caps)
    output = capfd.readouterr()
    text = "\n".join([output.out, output.err, *(str(w.message) for w in caught)])
    assert text.count("Trainable params") == 2  # both summaries were printed
    return [noise for noise in KNOWN_NOISE if noise in text]


def test_known_noise_lines_are_not_printed(
    in_tmp_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """None of the three lines comes out of the CLI; with its warning filters switched off, the
    two warnings do (so the runs are ones that would print them)."""
    assert noise_of_two_runs(capfd) == []
    monkeypatch.setattr(cli_module, "IGNORED_WARNINGS", ())
    assert noise_of_two_runs(capfd) == list(KNOWN_NOISE[:2])
