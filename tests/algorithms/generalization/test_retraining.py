"""Retraining commands, the collection's cycling, parallel order, and reading CSV metrics."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from optiforge.algorithms.generalization import Distributions, Retraining, run_retrainings
from optiforge.algorithms.generalization import retraining as module


def test_command_sets_the_seeds_and_a_csv_logger(tmp_path: Path) -> None:
    """One seed drives seed_everything and the bootstrap; logs go to the run's own folder."""
    command = module.retraining_command([Path("a.yaml"), Path("b.yaml")], 7, tmp_path, ["--x", "1"])
    assert command[1:3] == [str(module.TRAIN_PY), "fit"]
    joined = " ".join(command)
    assert "--seed_everything 7 --data.init_args.train_resample_seed 7" in joined
    assert f"--trainer.logger.save_dir {tmp_path}" in joined
    assert "lightning.pytorch.loggers.CSVLogger" in joined
    assert joined.index("a.yaml") < joined.index("b.yaml") and command[-2:] == ["--x", "1"]


def test_distributions_cycle_over_the_runs() -> None:
    """Run k gets value k mod J; a malformed option names the field."""
    noise = Distributions.parse("--data.init_args.label_noise=0.0, 0.2")
    assert noise.option == "data.init_args.label_noise"
    assert [noise.arguments(k)[1] for k in range(5)] == ["0.0", "0.2", "0.0", "0.2", "0.0"]
    for bad in ("label_noise", "=0.1", "x=0.1,,0.2"):
        with pytest.raises(ValueError, match="^distributions:"):
            Distributions.parse(bad)


def test_parallel_runs_come_back_in_index_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 3 workers, runs that finish in reverse order are still returned by index, each
    with seed = seed + index."""

    def fake_run(
        configs: list[Path],
        index: int,
        seed: int,
        runs_dir: Path,
        distributions: Distributions,
        metric: str,
        kind: str,
        *_: object,
    ) -> Retraining:
        time.sleep(0.05 * (4 - index))
        value = distributions.arguments(index)[1]
        return Retraining(index, seed, value, 0.0, float(index), 0.0)

    monkeypatch.setattr(module, "run_one", fake_run)
    noise = Distributions("data.init_args.label_noise", ("0.0", "0.3"))
    runs = run_retrainings([], 4, tmp_path, workers=3, seed=10, distributions=noise)
    assert [(run.index, run.seed, run.distribution) for run in runs] == [
        (0, 10, "0.0"),
        (1, 11, "0.3"),
        (2, 12, "0.0"),
        (3, 13, "0.3"),
    ]


def test_logged_losses_read_the_last_value(tmp_path: Path) -> None:
    """Last non-empty value; `_epoch` names are found; accuracy becomes 1 - accuracy; a metric
    the run never logged is named."""
    metrics = tmp_path / "metrics.csv"
    metrics.write_text(
        "epoch,step,test/acc,train/acc,train/loss_epoch\n0,0,,0.5,2.0\n0,1,,0.75,1.5\n1,2,0.875,,\n"
    )
    assert module.logged_loss(metrics, "train", "acc", "accuracy") == 0.25
    assert module.logged_loss(metrics, "test", "acc", "accuracy") == 0.125
    assert module.logged_loss(metrics, "train", "loss", "loss") == 1.5
    with pytest.raises(ValueError, match="^metric: the run logged none of test/loss"):
        module.logged_loss(metrics, "test", "loss", "loss")
