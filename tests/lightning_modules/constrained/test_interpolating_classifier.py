"""InterpolatingClassifier: the per-sample equality contract, satisfaction metrics, a real fit."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import pytest
import torch
from torch import nn

from optiforge.datamodules import DigitsDataModule
from optiforge.datamodules.digits_interpolation import DigitsInterpolationDataModule
from optiforge.lightning_modules.constrained.interpolating_classifier import (
    InterpolatingClassifier,
    constraint_satisfaction,
)
from optiforge.optimizers import DualAscent


def silent(model: InterpolatingClassifier) -> InterpolatingClassifier:
    model.log = lambda *args, **kwargs: None  # no trainer attached
    model.log_dict = lambda *args, **kwargs: None
    return model


def test_lagrangian_step_records_mean_ce_and_one_equality_per_constrained_sample() -> None:
    """Fixed linear net with logits W x: residual j is the CE of constrained row j, by hand;
    with multipliers at zero the returned Lagrangian is the mean CE."""
    torch.manual_seed(0)
    model = silent(InterpolatingClassifier(widths=(), constraint_mode="lagrangian"))
    linear = model.net[1]
    x = torch.rand(12, 1, 8, 8)
    y = torch.randint(0, 10, (12,))
    constrained = torch.zeros(12, dtype=torch.bool)
    constrained[[1, 4, 5, 10]] = True
    output = model.training_step((x, y, constrained), 0)
    assert model.duals.kinds == {"interpolation": "equality"}
    residual = model.duals.last_residuals["interpolation"]
    assert residual.shape == (4,) and output.requires_grad
    logits = x.reshape(12, 64) @ linear.weight.T + linear.bias
    by_hand = torch.stack(
        [torch.logsumexp(logits[i], 0) - logits[i, y[i]] for i in range(12)]
    ).detach()
    torch.testing.assert_close(residual, by_hand[constrained])
    torch.testing.assert_close(output.detach(), by_hand.mean())


def test_erm_step_returns_the_mean_ce_only() -> None:
    """The ERM training step returns only the scalar mean cross-entropy."""
    torch.manual_seed(0)
    model = silent(InterpolatingClassifier(widths=(16,), constraint_mode="erm"))
    x, y = torch.rand(6, 1, 8, 8), torch.randint(0, 10, (6,))
    loss = model.training_step((x, y, torch.ones(6, dtype=torch.bool)), 0)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0
    torch.testing.assert_close(loss, nn.functional.cross_entropy(model(x), y))


def test_satisfaction_metrics_on_hand_made_logits() -> None:
    """Two classes: logits (a, 0) with label 0 give CE = log(1 + exp(-a))."""
    logits = torch.tensor([[5.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    labels = torch.tensor([0, 0, 0, 1])
    metrics = constraint_satisfaction(logits, labels, tol=0.05)
    losses = [math.log1p(math.exp(-5)), math.log1p(math.exp(-1)), math.log1p(math.exp(2))]
    losses.append(math.log1p(math.exp(3)))
    assert float(metrics["constrained_loss_max"]) == pytest.approx(max(losses), rel=1e-6)
    assert float(metrics["constrained_satisfied"]) == pytest.approx(0.25)  # only CE(5) < 0.05
    assert float(metrics["constrained_acc"]) == pytest.approx(0.5)  # rows 0 and 1
    loose = constraint_satisfaction(logits, labels, tol=0.5)
    assert float(loose["constrained_satisfied"]) == pytest.approx(0.5)  # CE(1) = 0.313 too


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"constraint_mode": "hard"}, "model.constraint_mode must be one of"),
        ({"num_classes": 1}, "model.num_classes must be >= 2, got 1"),
        ({"widths": (8, 0)}, "model.widths must all be >= 1"),
        ({"satisfaction_tol": 0.0}, "model.satisfaction_tol must be > 0, got 0.0"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Bad mode, num_classes, widths or satisfaction_tol raise naming model.<field>."""
    with pytest.raises(ValueError, match=message):
        InterpolatingClassifier(**kwargs)


class AdamWInterpolation(InterpolatingClassifier):
    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=1e-3, weight_decay=1.0)


def fit_and_test(mode: str, tmp_path: Path) -> dict[str, float]:
    L.seed_everything(0)
    duals = DualAscent(dual_lr=1e-3)
    model = AdamWInterpolation(widths=(64,), constraint_mode=mode, duals=duals)
    data = DigitsInterpolationDataModule(constrained_samples=100, steps_per_epoch=150)
    trainer = L.Trainer(
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(model, datamodule=data)
    assert trainer.global_step == 300
    return trainer.test(model, datamodule=data, verbose=False)[0]


def test_lagrangian_fit_interpolates_the_subset_that_erm_does_not(tmp_path: Path) -> None:
    """300 AdamW steps with strong weight decay: ERM leaves a constrained sample at CE ~1.4
    (measured); the equality-constrained run pushes every one of them to ~0.17."""
    erm = fit_and_test("erm", tmp_path)
    constrained = fit_and_test("lagrangian", tmp_path)
    assert erm["test/constrained_loss_max"] > 1.0
    assert constrained["test/constrained_loss_max"] < 0.3
    assert constrained["test/constrained_satisfied"] > erm["test/constrained_satisfied"]
    assert constrained["test/constrained_acc"] == 1.0
    assert constrained["test/acc"] > 0.85 and erm["test/acc"] > 0.85


def test_plain_digits_datamodule_is_refused(tmp_path: Path) -> None:
    """Fitting on the plain digits datamodule (no constrained_split) is refused."""
    trainer = L.Trainer(
        max_steps=1, logger=False, enable_progress_bar=False, default_root_dir=tmp_path
    )
    with pytest.raises(ValueError, match="needs a datamodule with `constrained_split"):
        trainer.fit(AdamWInterpolation(constraint_mode="erm"), datamodule=DigitsDataModule())
