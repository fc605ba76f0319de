"""`python -m optiforge.algorithms.generalization` end to end through train.py, and its one-line
errors."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from optiforge.algorithms.generalization.cli import main
from tests.cli_helpers import CONFIG_DIR, PROJECT_ROOT, layered

BASE = CONFIG_DIR / "generalization" / "base.yaml"
NEAREST_NEIGHBOUR = CONFIG_DIR / "generalization" / "digits_1nn.yaml"
DEMO = ("--config", str(BASE), "--config", str(NEAREST_NEIGHBOUR))


def run_diagnostic(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The diagnostic's command line as a subprocess, offline, one thread per run."""
    env = {**os.environ, "WANDB_MODE": "disabled", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "optiforge.algorithms.generalization", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def small_demo_config(tmp_path: Path) -> Path:
    """The 1-NN demo as one file training on a 30 % share of digits (35 % val, 35 % test)."""
    config = layered(BASE, NEAREST_NEIGHBOUR)
    config["data"]["init_args"].update(val_fraction=0.35, test_fraction=0.35)
    small = tmp_path / "small.yaml"
    small.write_text(yaml.safe_dump(config))
    return small


def test_three_retrainings_of_one_nearest_neighbour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three 1-NN retrainings on a 30 % share of digits, two noise levels: training loss 0,
    the test losses and the estimate in the JSON agree with each other and with the table.
    (The command line's `main` in this process: the children are forked from the warm server
    either way; the tests below run it as its own process.)"""
    small = small_demo_config(tmp_path)
    main(
        [
            *("--config", str(small), "--retrainings", "3", "--delta", "0.2"),
            *("--distributions", "data.init_args.label_noise=0.0,0.5"),
            *("--runs-dir", str(tmp_path / "runs"), "--json", str(tmp_path / "out.json")),
        ]
    )
    stdout = capsys.readouterr().out
    report = json.loads((tmp_path / "out.json").read_text())
    runs = report["runs"]
    assert [run["distribution"] for run in runs] == ["0.0", "0.5", "0.0"]
    assert [run["seed"] for run in runs] == [0, 1, 2]
    assert all(run["train_loss"] == 0.0 for run in runs)
    clean, noisy = runs[0]["test_loss"], runs[1]["test_loss"]
    assert 0.0 < clean < 0.1 and 0.3 < noisy < 0.7
    tests = [run["test_loss"] for run in runs]
    mean = sum(tests) / 3
    variance = sum((t - mean) ** 2 for t in tests) / 2
    estimate = report["estimate"]
    assert estimate["retrainings"] == 3 and estimate["gap"] == pytest.approx(mean)
    assert estimate["conditional_variance"] == pytest.approx(variance)
    assert estimate["bound"] == pytest.approx(math.sqrt(variance / 0.2))
    assert "retrainings K = 3" in stdout
    assert len(list((tmp_path / "runs").glob("retraining-*/metrics.csv"))) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--config", "nowhere.yaml", "--retrainings", "3"), "error: config: no such file"),
        (
            (*DEMO, "--retrainings", "1"),
            "error: retrainings:",
        ),
        (
            (
                *DEMO,
                "--retrainings",
                "3",
                "--delta",
                "0",
            ),
            "delta",
        ),
        (
            (
                *DEMO,
                "--retrainings",
                "3",
                "--distributions",
                "x",
            ),
            "error: argument --distributions: distributions: expected OPTION=V1,V2,...",
        ),
    ],
)
def test_bad_input_fails_in_one_line_before_any_run(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    """Unknown config, K < 3, delta outside (0, 1), a malformed collection: exit 2, one line
    on stderr naming the option, and no run folder written."""
    result = run_diagnostic(*args, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not (tmp_path / "runs").exists()


def test_config_without_test_metric_fails_by_name(tmp_path: Path) -> None:
    """A config whose runs would not test ends before training, naming test_after_fit."""
    config = layered(BASE, NEAREST_NEIGHBOUR)
    config["test_after_fit"] = False
    path = tmp_path / "untested.yaml"
    path.write_text(yaml.safe_dump(config))
    result = run_diagnostic("--config", str(path), "--retrainings", "3", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: test_after_fit:") and result.stderr.count("\n") == 1


def test_progress_lines_and_ctrl_c_stops_the_children_without_a_result(tmp_path: Path) -> None:
    """A start line names each child's pid; SIGINT to the diagnostic during the first
    retraining ends it within 5 s with status 130, the child gone, and no JSON written."""
    small = small_demo_config(tmp_path)
    env = {**os.environ, "WANDB_MODE": "disabled", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    output = tmp_path / "out.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "optiforge.algorithms.generalization"]
        + ["--config", str(small), "--retrainings", "3", "--json", str(output)],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal, whatever launched the suite: a shell without job control
        # starts background jobs (`pytest &`) with SIGINT ignored, and children inherit that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("retraining 1/3 started (seed 0, pid "), first
    child = int(first.rsplit("pid ", 1)[1].rstrip(")\n"))
    time.sleep(1.0)  # the child is importing or training now
    start = time.monotonic()
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=30)[1]
    elapsed = time.monotonic() - start
    assert process.returncode == 130, rest[-3000:]
    assert elapsed < 5.0
    assert "interrupted: running retrainings stopped, no result written" in rest
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert not output.exists() and not list(tmp_path.glob("out.json*"))
