"""EquivariantRegressor and its teacher data: the three modes, the penalty schedules, bad
arguments, and a Lightning run through train.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from optiforge.datamodules.permutation_teacher import PermutationTeacherDataModule
from optiforge.lightning_modules.equivariant.module import EquivariantRegressor
from tests.cli_helpers import PROJECT_ROOT, run_cli

CONFIG = PROJECT_ROOT / "configs" / "equivariant" / "teacher_pairs_student_sets.yaml"


def regressor(mode: str, seed: int = 3, **kwargs: object) -> EquivariantRegressor:
    torch.manual_seed(seed)
    return EquivariantRegressor(n=4, hidden_blocks=("set", "pairs"), mode=mode, **kwargs)


def test_relaxed_starts_exactly_where_constrained_starts() -> None:
    """Same seed: identical outputs (bit for bit), the relaxed dense weights on the subspace;
    the free MLP starts elsewhere, off the subspace."""
    constrained, relaxed, free = regressor("constrained"), regressor("relaxed"), regressor("free")
    x = torch.randn(32, 4)
    assert torch.equal(constrained(x), relaxed(x))
    assert relaxed.network.squared_distance().item() < 1e-12
    assert sum(p.numel() for p in relaxed.parameters()) == 4 * 20 + 20 + 20 + 1
    assert sum(p.numel() for p in constrained.parameters()) < 20
    assert not torch.allclose(constrained(x), free(x))
    assert free.network.squared_distance().item() > 1e-2
    noisy = regressor("relaxed", init_noise=0.1)
    assert noisy.network.squared_distance().item() > 1e-3


def test_penalty_schedules() -> None:
    """Constant, linear_decay and until schedules by hand; relaxed loss is mse + w * distance."""
    constant = regressor("relaxed", penalty=2.0)
    decay = regressor("relaxed", penalty=2.0, penalty_schedule="linear_decay", penalty_steps=100)
    until = regressor("relaxed", penalty=2.0, penalty_schedule="until", penalty_steps=100)
    assert [constant.penalty_weight(s) for s in (0, 50, 500)] == [2.0, 2.0, 2.0]
    assert [decay.penalty_weight(s) for s in (0, 25, 100, 500)] == [2.0, 1.5, 0.0, 0.0]
    assert [until.penalty_weight(s) for s in (0, 99, 100)] == [2.0, 2.0, 0.0]
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss, mse = constant.objective(x, y, 0)
    assert loss.item() == pytest.approx(mse.item())  # relaxed starts on the subspace
    with torch.no_grad():
        constant.network.hidden.weight_values.add_(0.1)
    loss, mse = constant.objective(x, y, 0)
    expected = mse + 2.0 * constant.network.squared_distance()
    assert loss.item() == pytest.approx(expected.item())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "tied"}, "mode must be one of constrained, relaxed, free; got 'tied'"),
        ({"penalty": -1.0, "mode": "relaxed"}, "penalty must be >= 0"),
        ({"penalty": 1.0}, "0 in constrained mode"),
        ({"penalty_schedule": "cosine", "mode": "relaxed"}, "penalty_schedule must be"),
        ({"penalty_schedule": "until", "mode": "relaxed"}, "penalty_steps must be >= 1"),
        ({"init_noise": -0.1}, "init_noise and track_every must be >= 0"),
        ({"hidden_blocks": ("set", "triples")}, r"unknown representation blocks \['triples'\]"),
    ],
)
def test_bad_arguments_fail_clearly(kwargs: dict, message: str) -> None:
    """Each bad mode, penalty, schedule, init_noise or block raises a clear ValueError."""
    with pytest.raises(ValueError, match=message):
        EquivariantRegressor(**kwargs)


def test_teacher_data_is_seeded_and_invariant() -> None:
    """Same seed, same data; the teacher's invariant output ignores the order of the inputs."""
    first, second = PermutationTeacherDataModule(seed=5), PermutationTeacherDataModule(seed=5)
    for split in ("train", "val", "test"):
        for a, b in zip(first.splits[split], second.splits[split], strict=True):
            assert torch.equal(a, b)
    x, y = first.splits["test"]
    with torch.no_grad():
        shuffled = first.teacher(x[:, torch.tensor([2, 0, 3, 1])])
    torch.testing.assert_close(shuffled, y, atol=1e-5, rtol=1e-5)
    assert not torch.equal(PermutationTeacherDataModule(seed=6).splits["train"][1], y[:2048])
    with pytest.raises(ValueError, match="train_size must be >= 1"):
        PermutationTeacherDataModule(train_size=0)
    with pytest.raises(ValueError, match="teacher_scale > 0"):
        PermutationTeacherDataModule(teacher_scale=0.0)


@pytest.mark.parametrize("mode", ["constrained", "relaxed"])
def test_train_py_fit_and_test(mode: str, in_tmp_dir: Path) -> None:
    """A short Lightning run from the shipped config: the training loss falls, the constrained
    network stays exactly equivariant, and the end-of-training landscape and the candidate
    distances reach the test metrics."""
    cli = run_cli(
        "fit",
        "--config",
        str(CONFIG),
        "--trainer.max_epochs",
        "3",
        "--trainer.logger",
        "false",
        "--trainer.enable_progress_bar",
        "false",
        "--model.init_args.mode",
        mode,
        "--model.init_args.track_every",
        "100",
    )
    metrics = cli.trainer.callback_metrics
    module = cli.model
    assert metrics["test/relative_mse"] < 0.05
    assert set(module.end_measurements) >= {
        "landscape/hessian_min_outside",
        "landscape/grad_outside_norm",
        "hidden_rep/4 set",
        "hidden_rep/1 pairs",
    }
    assert float(metrics["test/landscape/loss"]) == pytest.approx(
        module.end_measurements["landscape/loss"]
    )
    if mode == "constrained":
        assert float(metrics["test/distance"]) < 1e-6
        assert module.end_measurements["hidden_rep/4 set"] < 1e-6
    else:
        assert float(metrics["test/distance"]) > 1e-6
