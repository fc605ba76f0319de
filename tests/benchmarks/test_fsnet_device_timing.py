"""The FSNet device-timing benchmark, run on the CPU from a checkpoint trained for two steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from optiforge.benchmarks.fsnet_device_timing import train_trial
from optiforge.benchmarks.harness import cli

SMALL = ["--device", "cpu", "--cpu-batch", "4", "--repeats", "1"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-variable convex-QP FSNet trained for two steps and saved as train.py would."""
    return train_trial(tmp_path_factory.mktemp("fsnet_ckpt"))


def timing(arguments: list[str], out: Path) -> None:
    cli.main(["run", "fsnet_device_timing", *arguments, "--out", str(out)])


def test_times_and_checks_every_batch(checkpoint: Path, tmp_path: Path) -> None:
    """Each batch size is timed and checked; the CPU row solves the same first instances, so at
    an equal batch on the CPU both rows return the same points (same mean objective)."""
    timing(["--checkpoints", str(checkpoint), "--batch-sizes", "4", "16", *SMALL], tmp_path)
    record = json.loads((tmp_path / "fsnet_device_timing.json").read_text())
    assert record["provenance"]["device"] == "cpu"
    (row,) = record["results"].values()
    assert set(row["device"]) == {"4", "16"}
    for result in row["device"].values():
        assert result["feasible_rate"] == 1.0
        assert result["ms_per_instance"] > 0
    assert row["cpu"]["batch"] == 4
    assert row["cpu"]["objective_mean"] == pytest.approx(row["device"]["4"]["objective_mean"])
    assert "| cpu | 16 |" in (tmp_path / "fsnet_device_timing.md").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch-sizes", "0"], "--batch-sizes: must be > 0, got 0"),
        (["--repeats", "0"], "--repeats: must be > 0, got 0"),
        (["--test-max-iter", "0"], "--test-max-iter: must be > 0, got 0"),
        (["--device", "tpu"], "--device: invalid choice: 'tpu' (choose from 'cpu', 'cuda')"),
        (["--checkpoints", "missing.ckpt"], "--checkpoints: no such file or folder: missing"),
    ],
)
def test_bad_arguments_fail_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    """A non-positive size, an unknown device or a missing checkpoint exits naming the field,
    before anything is written."""
    with pytest.raises(SystemExit):
        timing([*SMALL, *extra], tmp_path)
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not any(tmp_path.iterdir())


def test_a_bad_file_or_an_absent_device_stops_before_any_timing(tmp_path: Path) -> None:
    """Not a checkpoint, or CUDA asked for where there is none: one line, nothing written."""
    not_a_checkpoint = tmp_path.parent / f"{tmp_path.name}_notes.ckpt"
    not_a_checkpoint.write_text("not a checkpoint")
    with pytest.raises(SystemExit, match="--checkpoints: .* is not an FSNet checkpoint"):
        timing(["--checkpoints", str(not_a_checkpoint), *SMALL], tmp_path)
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match="--device cuda: CUDA is not available"):
            timing([*SMALL, "--device", "cuda"], tmp_path)
    assert not any(tmp_path.iterdir())
