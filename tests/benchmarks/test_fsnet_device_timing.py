"""The FSNet device-timing script, run on the CPU from a checkpoint trained for one epoch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from optiforge.benchmarks.fsnet_device_timing import main
from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule
from optiforge.lightning_modules.fsnet.module import FSNet
from optiforge.problems.constrained import ProblemSpec


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-variable convex-QP FSNet trained for one epoch and saved as train.py would."""
    root = tmp_path_factory.mktemp("fsnet_ckpt")
    problem = ProblemSpec("convex_qp", num_vars=6, num_eq=2, num_ineq=2)
    data = ConstrainedProblemDataModule(
        problem, train_size=32, val_size=1, test_size=1, batch_size=16, cache_dir=str(root)
    )
    model = FSNet(problem, (16,), max_iter=5, unrolled_iter=2)
    trainer = quiet_trainer(1, root)
    trainer.fit(model, datamodule=data)
    path = root / "convex_qp.ckpt"
    trainer.save_checkpoint(path)
    return path


def test_times_and_checks_every_batch(checkpoint: Path, tmp_path: Path) -> None:
    """Each batch size is timed and checked; the CPU row solves the same first instances, so at
    an equal batch on the CPU both rows return the same points (same mean objective)."""
    main(
        [
            *("--checkpoints", str(checkpoint), "--device", "cpu", "--batch-sizes", "4", "16"),
            *("--cpu-batch", "4", "--repeats", "1", "--output-dir", str(tmp_path)),
        ]
    )
    row = json.loads((tmp_path / "fsnet_device_timing.json").read_text())["results"][
        str(checkpoint)
    ]
    assert set(row["device"]) == {"4", "16"}
    for result in row["device"].values():
        assert result["feasible_rate"] == 1.0
        assert result["ms_per_instance"] > 0
    assert row["cpu"]["batch"] == 4
    assert row["cpu"]["objective_mean"] == pytest.approx(row["device"]["4"]["objective_mean"])
    assert "| cpu | 16 |" in (tmp_path / "fsnet_device_timing.md").read_text()


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (["--device", "cpu", "--batch-sizes", "0"], "--batch-sizes"),
        (["--device", "cpu", "--repeats", "0"], "--repeats"),
        (["--device", "cpu", "--test-max-iter", "0"], "--test-max-iter"),
        pytest.param(
            ["--device", "cuda:0"],
            "--device",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present"),
        ),
    ],
)
def test_bad_arguments_fail_in_one_line(
    checkpoint: Path, tmp_path: Path, extra: list[str], field: str
) -> None:
    """A missing checkpoint, an absent device or a non-positive size exits naming the field,
    before anything is written."""
    with pytest.raises(SystemExit, match="--checkpoints"):
        main(["--checkpoints", str(tmp_path / "missing.ckpt"), "--output-dir", str(tmp_path)])
    not_a_checkpoint = tmp_path.parent / f"{tmp_path.name}_notes.ckpt"
    not_a_checkpoint.write_text("not a checkpoint")
    with pytest.raises(SystemExit, match="--checkpoints: .* is not an FSNet checkpoint"):
        main(
            [
                "--checkpoints",
                str(not_a_checkpoint),
                "--device",
                "cpu",
                "--output-dir",
                str(tmp_path),
            ]
        )
    with pytest.raises(SystemExit, match=field):
        main(["--checkpoints", str(checkpoint), *extra, "--output-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())
