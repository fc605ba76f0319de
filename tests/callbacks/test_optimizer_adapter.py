"""OptimizerAdapter keeps SAM's perturbed pass out of the logs and metrics of any module."""

from __future__ import annotations

import warnings
from pathlib import Path

import lightning as L
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from lightning.pytorch.loggers import CSVLogger
from torch import Tensor, nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import MeanSquaredError

from optiforge.callbacks.optimizer_adapter import OptimizerAdapter, unreported
from optiforge.optimizers import create, needs
from optiforge.optimizers.sam import SAM
from optiforge.optimizers.sharpness_pass import SharpnessPass
from tests.cli_helpers import metric_column
from tests.trainers import fake_trainer, quiet_trainer

torch.manual_seed(0)
X = torch.randn(32, 3)
Y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(32)
BATCH, EPOCHS = 8, 2


class NaiveRegression(L.LightningModule):
    """Least squares written as anyone would: no sharpness pass, logs and metrics every call."""

    def __init__(self, adaptive: bool) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.net = nn.Linear(3, 1)
        self.mse = MeanSquaredError()
        self.adaptive = adaptive
        self.calls = 0

    def training_step(self, batch: list[Tensor], batch_idx: int) -> Tensor:
        self.calls += 1
        x, y = batch
        prediction = self.net(x).squeeze(-1)
        loss = F.mse_loss(prediction, y)
        self.mse(prediction, y)
        self.log("train/loss", loss, on_step=True, on_epoch=True)
        self.log_dict({"train/mse": self.mse}, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return SAM(self.parameters(), torch.optim.SGD, rho=0.5, adaptive=self.adaptive, lr=0.1)


class LossAtCurrentWeights(L.Callback):
    """Records, before each step, the batch loss at the current weights (plain torch)."""

    def __init__(self) -> None:
        self.losses: list[float] = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        x, y = batch
        weight, bias = (p.detach().clone() for p in pl_module.net.parameters())
        self.losses.append(float(((x @ weight.T + bias).squeeze(-1) - y).pow(2).mean()))


@pytest.mark.parametrize("adaptive", [False, True], ids=["SAM", "ASAM"])
def test_logged_loss_and_metrics_are_at_the_current_weights(adaptive: bool, tmp_path: Path) -> None:
    """A module unaware of SAM's passes logs, per step and per epoch, the loss at the weights
    before the step, and its torchmetrics MSE sees those passes only; SAM still runs 2 passes."""
    module, recorder = NaiveRegression(adaptive), LossAtCurrentWeights()
    trainer = L.Trainer(
        max_epochs=EPOCHS,
        accelerator="cpu",
        logger=CSVLogger(tmp_path),
        log_every_n_steps=1,
        callbacks=[OptimizerAdapter(), recorder],
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, DataLoader(TensorDataset(X, Y), batch_size=BATCH))
    steps = EPOCHS * len(X) // BATCH
    assert module.calls == 2 * steps
    metrics = next(tmp_path.rglob("metrics.csv"))
    expected = torch.tensor(recorder.losses)
    assert len(expected) == steps
    torch.testing.assert_close(torch.tensor(metric_column(metrics, "train/loss_step")), expected)
    per_epoch = expected.view(EPOCHS, -1).mean(1)  # equal batches: epoch MSE = mean of losses
    torch.testing.assert_close(torch.tensor(metric_column(metrics, "train/loss_epoch")), per_epoch)
    torch.testing.assert_close(torch.tensor(metric_column(metrics, "train/mse")), per_epoch)
    assert "log" not in vars(module)


def test_reported_passes_are_left_alone() -> None:
    """A pass with `log=True` (at the current weights) keeps `self.log` and metric updates."""
    module = NaiveRegression(adaptive=False)
    with unreported(module, SharpnessPass()):
        assert "log" not in vars(module)
        module.mse(torch.ones(2), torch.zeros(2))
    assert float(module.mse.compute()) == 1.0


def test_unreported_pass_restores_metrics_even_when_the_closure_raises() -> None:
    """Metric state and `log` come back after an unreported pass that fails half-way."""
    module = NaiveRegression(adaptive=False)
    module.mse(torch.ones(2), torch.zeros(2))
    unreported_pass = unreported(module, SharpnessPass(perturbed=True, log=False))
    with pytest.raises(FloatingPointError), unreported_pass:
        module.mse(3 * torch.ones(2), torch.zeros(2))
        module.log("anything", 1.0)  # a no-op: no trainer is needed
        raise FloatingPointError
    assert float(module.mse.compute()) == 1.0
    assert "log" not in vars(module)


FLOATS = st.floats(-100, 100, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(
    reported=st.lists(st.tuples(FLOATS, FLOATS), min_size=1, max_size=6),
    hidden=st.lists(st.tuples(FLOATS, FLOATS), min_size=1, max_size=6),
)
def test_metric_sees_only_reported_passes(
    reported: list[tuple[float, float]], hidden: list[tuple[float, float]]
) -> None:
    """Updates interleaved with unreported passes leave the MSE of the reported pairs alone."""
    module = NaiveRegression(adaptive=False)
    for (p, t), (q, u) in zip(reported, hidden * len(reported), strict=False):
        module.mse(torch.tensor([p]), torch.tensor([t]))
        with unreported(module, SharpnessPass(perturbed=True, log=False)):
            module.mse(torch.tensor([q]), torch.tensor([u]))
    expected = sum((p - t) ** 2 for p, t in reported) / len(reported)
    assert float(module.mse.compute()) == pytest.approx(expected, rel=1e-5, abs=1e-3)


@pytest.mark.parametrize(
    ("name", "overrides", "flag"),
    [
        ("HessianReuseAGD", {"world_size": 2}, "trainer.strategy with world size 2"),
        ("MeZO", {"precision": "bf16-mixed"}, "trainer.precision='bf16-mixed'"),
        ("SAM", {"accumulate_grad_batches": 4}, "trainer.accumulate_grad_batches=4"),
        ("NSGDHess", {"gradient_clip_val": 1.0}, "trainer.gradient_clip_val=1.0"),
    ],
)
def test_refusals_name_the_flag_the_optimizer_and_why(
    name: str, overrides: dict, flag: str
) -> None:
    """A setting the declaration cannot support is refused in one line: flag, name, reason."""
    optimizer = create(name, [torch.nn.Parameter(torch.ones(2))])
    with pytest.raises(ValueError) as error:
        OptimizerAdapter().on_fit_start(
            fake_trainer([optimizer], **overrides), NaiveRegression(False)
        )
    message = str(error.value)
    assert message.startswith(f"{flag} cannot drive {name}: {needs(name).reason}")
    assert "\n" not in message


def test_without_the_adapter_lightning_runs_warn_once_naming_it(tmp_path: Path) -> None:
    """SAM in a Trainer without OptimizerAdapter: one warning naming it over 8 steps; with it,
    or in a plain torch loop, none."""
    module = NaiveRegression(False)
    optimizer = module.configure_optimizers()

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(module.net(X).squeeze(-1), Y)
        loss.backward()
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizer.step(closure)
    for callbacks, expected in (([], 1), ([OptimizerAdapter()], 0)):
        trainer = quiet_trainer(max_epochs=2, callbacks=callbacks)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trainer.fit(NaiveRegression(False), DataLoader(TensorDataset(X, Y), batch_size=BATCH))
        named = [w for w in caught if "optiforge.callbacks.OptimizerAdapter" in str(w.message)]
        assert len(named) == expected


def test_private_lightning_and_torchmetrics_attributes_still_exist() -> None:
    """The private attributes the adapter uses (docs/optimizers.md lists them) still exist and
    mean what it assumes: `fit_loop._skip_backward` is the automatic loop's switch, and a metric
    keeps `_update_count`, `_computed`, `_forward_cache` beside its `metric_state`."""
    trainer = L.Trainer(accelerator="cpu", logger=False)
    automatic = trainer.fit_loop.epoch_loop.automatic_optimization
    assert automatic._skip_backward is False
    trainer.fit_loop._skip_backward = True
    assert automatic._skip_backward is True
    metric = MeanSquaredError()
    metric(torch.ones(2), torch.zeros(2))
    assert set(metric.metric_state) == {"sum_squared_error", "total"}
    assert metric._update_count == 1 and metric._computed is None
    assert float(metric._forward_cache) == 1.0
