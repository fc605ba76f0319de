"""FairClassifier: parity residuals and gaps by hand, the constraint contract, modes, a real fit."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.datamodules import CompasFairnessDataModule
from optiforge.lightning_modules.constrained import FairClassifier
from optiforge.lightning_modules.constrained.fair_classifier import (
    fairness_metrics,
    group_means,
    parity_residuals,
)
from optiforge.optimizers import DualAscent
from tests.cli_helpers import PROJECT_ROOT, run_train_py
from tests.wandb_offline_reader import history_values, read_records


def sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))


def test_parity_residuals_by_hand() -> None:
    """parity_residuals equal the hand values: group soft positive rate minus the overall one."""
    probabilities = torch.tensor([0.9, 0.1, 0.6, 0.4, 0.8])
    groups = torch.tensor([0, 0, 1, 1, 1])
    soft = [sigmoid(8 * (p - 0.5)) for p in (0.9, 0.1, 0.6, 0.4, 0.8)]
    overall = sum(soft) / 5
    expected = [(soft[0] + soft[1]) / 2 - overall, (soft[2] + soft[3] + soft[4]) / 3 - overall]
    residuals = parity_residuals(probabilities, groups, 2, 8.0)
    torch.testing.assert_close(residuals, torch.tensor(expected))


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.floats(0.0, 1.0), min_size=4, max_size=40),
    seed=st.integers(0, 1000),
)
def test_group_residuals_weighted_by_group_size_sum_to_zero(values: list[float], seed: int) -> None:
    """The overall rate is the size-weighted mean of the group rates, for any data."""
    probabilities = torch.tensor(values, dtype=torch.float64)
    groups = torch.randint(0, 3, (len(values),), generator=torch.Generator().manual_seed(seed))
    counts = torch.bincount(groups, minlength=3).to(torch.float64)
    residuals = parity_residuals(probabilities, groups, 3, 8.0).nan_to_num(0.0)
    assert abs(float((counts * residuals).sum())) < 1e-9


def test_group_means_of_an_empty_group_is_nan() -> None:
    """group_means gives the mean of a filled group and NaN for an empty group."""
    means = group_means(torch.tensor([1.0, 3.0]), torch.tensor([0, 0]), 2)
    assert means[0] == 2.0 and math.isnan(float(means[1]))


def test_fairness_metrics_hard_gap_by_hand() -> None:
    """Group 0 predicted positive 2/3, group 1 0/1, overall 2/4: gaps 1/6 and 1/2."""
    probabilities = torch.tensor([0.7, 0.9, 0.2, 0.3])
    labels = torch.tensor([1, 0, 0, 0])
    groups = torch.tensor([[0], [0], [0], [1]])
    metrics = fairness_metrics(probabilities, labels, groups, {"race": ("a", "b")}, 8.0)
    assert float(metrics["acc"]) == pytest.approx(0.75)
    assert float(metrics["parity_gap/race"]) == pytest.approx(0.5)
    assert float(metrics["parity_gap"]) == pytest.approx(0.5)
    expected_loss = -(math.log(0.7) + math.log(0.1) + math.log(0.8) + math.log(0.7)) / 4
    assert float(metrics["loss"]) == pytest.approx(expected_loss, rel=1e-5)


def module_with_groups(**kwargs: object) -> FairClassifier:
    module = FairClassifier(num_features=3, **kwargs)
    module.group_names = {"race": ("a", "b", "c"), "sex": ("m", "f")}
    module.log = lambda *args, **kwargs: None  # no trainer attached
    return module


def batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(12, 3, generator=generator)
    y = torch.randint(0, 2, (12,), generator=generator)
    groups = torch.stack([torch.arange(12) % 3, torch.arange(12) % 2], dim=1)
    return x, y, groups


def test_lagrangian_mode_records_one_equality_per_group() -> None:
    """Lagrangian mode records one parity equality per attribute, one entry per group, and
    returns BCE + <mu, h> (BCE alone while the multipliers are zero, by hand with mu set)."""
    module = module_with_groups(constraint_mode="lagrangian")
    x, y, groups = batch()
    output = module.training_step((x, y, groups), 0)
    probabilities = module(x)
    torch.testing.assert_close(output, F.binary_cross_entropy(probabilities, y.float()))
    assert module.duals.kinds == {"parity_race": "equality", "parity_sex": "equality"}
    residuals = module.duals.last_residuals
    race = parity_residuals(probabilities, groups[:, 0], 3, 8.0)
    sex = parity_residuals(probabilities, groups[:, 1], 2, 8.0)
    torch.testing.assert_close(residuals["parity_race"], race.detach())
    torch.testing.assert_close(residuals["parity_sex"], sex.detach())
    module.duals.flat.copy_(torch.tensor([0.5, -1.0, 2.0, 3.0, -0.25]))  # race, then sex
    expected = F.binary_cross_entropy(probabilities, y.float()) + (
        0.5 * race[0] - race[1] + 2.0 * race[2] + 3.0 * sex[0] - 0.25 * sex[1]
    )
    torch.testing.assert_close(module.training_step((x, y, groups), 0), expected)


def test_penalty_mode_adds_weighted_squared_residuals() -> None:
    """Penalty mode returns BCE + penalty_weight * sum of squared parity residuals."""
    module = module_with_groups(constraint_mode="penalty", penalty_weight=7.0)
    x, y, groups = batch()
    probabilities = module(x)
    bce = F.binary_cross_entropy(probabilities, y.float())
    race = parity_residuals(probabilities, groups[:, 0], 3, 8.0)
    sex = parity_residuals(probabilities, groups[:, 1], 2, 8.0)
    expected = bce + 7.0 * (race.square().sum() + sex.square().sum())
    torch.testing.assert_close(module.training_step((x, y, groups), 0), expected)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"constraint_mode": "fair"}, "model.constraint_mode must be one of"),
        ({"constraint_mode": "penalty"}, "model.penalty_weight must be > 0 when"),
        ({"penalty_weight": -1.0}, "model.penalty_weight must be >= 0"),
        ({"temperature": 0.0}, "model.temperature must be > 0"),
        ({"num_features": 0}, "model.num_features must be >= 1"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Bad mode, penalty_weight, temperature or num_features raise naming model.<field>."""
    with pytest.raises(ValueError, match=message):
        FairClassifier(**kwargs)


class AdamFairClassifier(FairClassifier):
    """The optimizer normally comes from the config (LightningCLI); here from the module."""

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=0.2)


def fit(mode: str, tmp_path: Path) -> tuple[L.Trainer, FairClassifier]:
    L.seed_everything(0)
    data = CompasFairnessDataModule(full_batch_steps=150)
    module = AdamFairClassifier(constraint_mode=mode, duals=DualAscent(dual_lr=0.01))
    trainer = L.Trainer(
        max_epochs=4,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(module, datamodule=data)
    trainer.test(module, datamodule=data, verbose=False)
    return trainer, module


def test_constrained_fit_shrinks_the_held_out_parity_gap(tmp_path: Path) -> None:
    """600 full-batch steps on COMPAS: the constrained model's test parity gap is far smaller."""
    free, free_module = fit("none", tmp_path / "free")
    constrained, module = fit("lagrangian", tmp_path / "eq")
    assert free_module.duals.primal_steps == 0  # no constraints, no dual steps
    assert module.duals.dual_steps == constrained.global_step == 600
    free_gap = float(free.callback_metrics["test/parity_gap"])
    constrained_gap = float(constrained.callback_metrics["test/parity_gap"])
    assert free_gap > 0.15
    assert constrained_gap < 0.6 * free_gap
    accuracy_drop = float(free.callback_metrics["test/acc"]) - float(
        constrained.callback_metrics["test/acc"]
    )
    assert accuracy_drop < 0.03


@pytest.mark.slow
def test_multipliers_and_residuals_reach_wandb_offline(tmp_path: Path) -> None:
    """`train.py fit` on the COMPAS parity config logs every multiplier and residual to W&B
    every 5 of 20 steps, and the dual steps move the multipliers."""
    result = run_train_py(
        "fit",
        "--config",
        str(PROJECT_ROOT / "configs" / "constrained" / "compas_fair_logreg.yaml"),
        "--trainer.max_epochs",
        "1",
        "--data.full_batch_steps",
        "20",
        "--trainer.log_every_n_steps",
        "5",
        "--test_after_fit",
        "false",
        cwd=tmp_path,
        env={"WANDB_MODE": "offline"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = read_records(next(tmp_path.glob("wandb/offline-run-*/run-*.wandb")))
    for name, size in (("parity_race", 4), ("parity_sex", 2)):
        for index in range(size):
            for kind in ("multiplier", "residual"):
                values = history_values(records, f"constraints/{name}/{kind}_{index}")
                assert len(values) == 4, (name, kind, index)
        multipliers = history_values(records, f"constraints/{name}/multiplier_0")
        assert multipliers[-1] != multipliers[0]  # the dual step moved it
