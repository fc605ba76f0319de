"""OptimizerAdapter: zeroth-order optimizers under Lightning train with no backward and no graph,
log and checkpoint as usual, and resume exactly."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch

from optiforge.callbacks import OptimizerAdapter
from optiforge.datamodules import DigitsDataModule
from optiforge.lightning_modules import Classifier
from optiforge.optimizers import MeZO, TelescopingZO
from tests.cli_helpers import DEFAULT_CONFIG, PROJECT_ROOT, run_cli, run_train_py
from tests.trainers import fake_trainer

QUIET = ["--trainer.logger", "false", "--trainer.enable_progress_bar", "false"]
QUIET += ["--test_after_fit", "false"]


class ZOClassifier(Classifier):
    """The reference classifier with a zeroth-order optimizer chosen in Python."""

    def __init__(self, optimizer: str) -> None:
        super().__init__(widths=(8, 8))
        self.optimizer_name = optimizer
        self.graphs: list[bool] = []  # per closure call: did the loss carry an autograd graph

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int):
        loss = super().training_step(batch, batch_idx)
        self.graphs.append(loss.requires_grad or loss.grad_fn is not None)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        if self.optimizer_name == "mezo":
            return MeZO(self.parameters(), lr=1e-3, directions=2)
        return TelescopingZO(self.parameters(), lr=1e-3, construction="P3")


class Recorder(L.Callback):
    """Keeps the initial weights."""

    def __init__(self) -> None:
        self.initial: list[torch.Tensor] = []

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.initial = [p.detach().clone() for p in pl_module.parameters()]


@pytest.mark.parametrize("optimizer", ["mezo", "telescoping"])
def test_fit_changes_weights_without_any_backward(
    optimizer: str, in_tmp_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 steps: weights move, no closure's loss has a graph, backward is never called, and the
    parameters are trainable again after fit."""

    def no_backward(*args: object, **kwargs: object) -> None:
        raise AssertionError("backward was called")

    monkeypatch.setattr(torch.Tensor, "backward", no_backward)
    monkeypatch.setattr(torch.autograd, "backward", no_backward)
    recorder = Recorder()
    model = ZOClassifier(optimizer)
    trainer = L.Trainer(
        max_steps=4,
        limit_val_batches=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[OptimizerAdapter(), recorder],
    )
    trainer.fit(model, DigitsDataModule(batch_size=32))
    assert trainer.global_step == 4
    assert len(model.graphs) >= 8 and not any(model.graphs)  # >= 2 closure calls a step
    after = list(model.parameters())
    changed = [not torch.equal(a, p) for a, p in zip(recorder.initial, after, strict=True)]
    assert all(changed)
    assert all(p.requires_grad for p in model.parameters())
    assert torch.isfinite(trainer.callback_metrics["train/loss"])


def test_mixing_with_a_gradient_optimizer_fails() -> None:
    """A module with a ZO and a gradient optimizer is refused, naming `optimizer`."""
    w = torch.nn.Parameter(torch.ones(2))
    trainer = fake_trainer([MeZO([w]), torch.optim.SGD([w], lr=0.1)])
    with pytest.raises(ValueError, match="^optimizer: forward-only"):
        OptimizerAdapter().on_fit_start(trainer, Classifier())


def fit(directory: Path, *extra: str) -> dict[str, torch.Tensor]:
    """The default config with `--optimizer optiforge.optimizers.TelescopingZO`, 5 batches an
    epoch."""
    run_cli(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--optimizer",
        "optiforge.optimizers.TelescopingZO",
        "--optimizer.lr",
        "0.001",
        "--optimizer.schedule",
        "zipf",
        "--trainer.limit_train_batches",
        "5",
        *QUIET,
        "--checkpoint.dirpath",
        str(directory),
        *extra,
    )
    checkpoint = torch.load(directory / "last.ckpt", weights_only=False)
    assert checkpoint["optimizer_states"][0]["zo_steps"] == checkpoint["global_step"]
    return checkpoint["state_dict"]


def test_cli_fit_resumes_exactly(in_tmp_dir: Path) -> None:
    """From the CLI: 2 epochs in one go equal 1 epoch, then a resume from last.ckpt (the step
    counter that seeds the directions is checkpointed)."""
    full = fit(in_tmp_dir / "full", "--trainer.max_epochs=2")
    stopped = fit(in_tmp_dir / "parts", "--trainer.max_epochs=1")
    resumed = fit(
        in_tmp_dir / "parts",
        "--trainer.max_epochs=2",
        "--ckpt_path",
        str(in_tmp_dir / "parts" / "last.ckpt"),
    )
    assert not all(torch.equal(full[n], stopped[n]) for n in full)
    assert all(torch.equal(full[n], resumed[n]) for n in full)


class RanksAgree(L.Callback):
    """At the end of fit, every rank holds the same weights (else the run fails)."""

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        flat = torch.cat([p.detach().flatten() for p in pl_module.parameters()])
        gathered = trainer.strategy.all_gather(flat)
        if not all(torch.equal(gathered[0], other) for other in gathered[1:]):
            raise RuntimeError("ranks disagree")


@pytest.mark.slow
def test_lightning_ddp_two_processes_stay_in_sync(tmp_path: Path) -> None:
    """`--trainer.strategy ddp` on 2 gloo processes: each rank its own directions and batch, the
    scalars all-gathered, both ranks end on the same weights after 6 MeZO steps."""
    result = run_train_py(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--trainer.devices",
        "2",
        "--trainer.strategy",
        "ddp",
        "--data.batch_size",
        "32",
        "--trainer.max_steps",
        "6",
        "--trainer.limit_val_batches",
        "0",
        *QUIET,
        "--optimizer",
        "optiforge.optimizers.MeZO",
        "--optimizer.lr",
        "1e-4",
        "--trainer.callbacks+=tests.callbacks.test_optimizer_adapter_forward_only.RanksAgree",
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    checkpoint = torch.load(next(tmp_path.rglob("last.ckpt")), weights_only=False)
    assert checkpoint["global_step"] == 6
    assert checkpoint["optimizer_states"][0]["zo_steps"] == 6
