"""LagrangianMixin in a user's own LightningModule under a plain Trainer: the analytic KKT point,
multipliers in checkpoints, exact resume, accumulation, logging, misuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from optiforge.lightning_modules.constrained import LagrangianMixin
from optiforge.lightning_modules.weights_file import weights_mismatch
from optiforge.optimizers import DualAscent, equality, inequality

SIZE = 4
CAP = 0.1


class NormOnSimplex(LagrangianMixin, L.LightningModule):
    """min ||x||^2 s.t. sum(x) = 1, optionally also x_0 <= CAP (the docs' example).

    KKT: 2 x + mu 1 (+ nu e_0) = 0. Without the cap x* = 1/n, mu* = -2/n; with it x_0 = CAP,
    the others (1 - CAP) / (n - 1), mu* = -2 (1 - CAP) / (n - 1), nu* = -2 CAP - mu* >= 0.
    """

    def __init__(self, capped: bool = False, duals: DualAscent | None = None) -> None:
        super().__init__(duals=duals)
        self.x = nn.Parameter(torch.zeros(SIZE, dtype=torch.float64))
        self.capped = capped

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        constraints = {"sum": equality(self.x.sum() - 1.0)}
        if self.capped:
            constraints["cap"] = inequality(self.x[:1] - CAP)
        return self.lagrangian(self.x.square().sum(), constraints)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self) -> DataLoader:
        return DataLoader(TensorDataset(torch.zeros(100, 1)), batch_size=1)


def trainer(root: Path, epochs: int, **kwargs: Any) -> L.Trainer:
    """A plain Lightning trainer: no project callbacks, no logger."""
    options: dict[str, Any] = {
        "max_epochs": epochs,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "default_root_dir": root,
    }
    return L.Trainer(**(options | kwargs))


def test_plain_trainer_reaches_the_analytic_kkt_point(tmp_path: Path) -> None:
    """300 steps of primal SGD 0.1 / dual SGD 0.1: x = 1/4 and mu = -1/2 to 1e-9."""
    module = NormOnSimplex(duals=DualAscent(dual_lr=0.1))
    fit = trainer(tmp_path, epochs=3, log_every_n_steps=1)
    fit.fit(module)
    assert module.duals.dual_steps == fit.global_step == 300
    torch.testing.assert_close(module.x.detach(), torch.full((SIZE,), 0.25, dtype=torch.float64))
    torch.testing.assert_close(module.duals.multipliers["sum"], torch.tensor([-0.5]).double())
    metrics = fit.callback_metrics
    assert float(metrics["constraints/sum/multiplier"]) == pytest.approx(-0.5, abs=1e-9)
    assert float(metrics["constraints/sum/residual"]) == pytest.approx(0.0, abs=1e-9)
    assert float(metrics["constraints/objective"]) == pytest.approx(0.25, abs=1e-9)


def test_inequality_cap_reaches_its_kkt_point(tmp_path: Path) -> None:
    """With x_0 <= 0.1 active: x = (0.1, 0.3, 0.3, 0.3), mu = -0.6, nu = 0.4."""
    module = NormOnSimplex(capped=True, duals=DualAscent(dual_lr=0.1))
    trainer(tmp_path, epochs=6).fit(module)
    expected = torch.tensor([CAP, 0.3, 0.3, 0.3], dtype=torch.float64)
    torch.testing.assert_close(module.x.detach(), expected)
    multipliers = module.duals.multipliers
    torch.testing.assert_close(multipliers["sum"], torch.tensor([-0.6]).double())
    torch.testing.assert_close(multipliers["cap"], torch.tensor([0.4]).double())


def test_checkpoint_carries_the_multipliers(tmp_path: Path) -> None:
    """The multipliers are buffers: the checkpoint's state dict holds them with the dual Adam
    state, a fresh module (no batch seen) passes the weights check and loads them."""
    module = NormOnSimplex(capped=True, duals=DualAscent(dual_optimizer="adam", dual_lr=0.05))
    trainer(tmp_path, epochs=1, max_steps=30, enable_checkpointing=True).fit(module)
    path = next(tmp_path.rglob("*.ckpt"))
    state = torch.load(path, weights_only=True)["state_dict"]
    torch.testing.assert_close(state["duals.flat"], module.duals.flat, rtol=0, atol=0)
    assert state["duals._extra_state"]["names"] == ["cap", "sum"]
    fresh = NormOnSimplex(capped=True, duals=DualAscent(dual_optimizer="adam", dual_lr=0.05))
    assert weights_mismatch(state, fresh) is None
    loaded = NormOnSimplex.load_from_checkpoint(
        path, duals=DualAscent(dual_optimizer="adam", dual_lr=0.05)
    )
    for name, value in module.duals.multipliers.items():
        torch.testing.assert_close(loaded.duals.multipliers[name], value, rtol=0, atol=0)
    assert loaded.duals.kinds == {"cap": "inequality", "sum": "equality"}
    assert loaded.duals.primal_steps == 30
    adam = module.duals.optimizer.state_dict()["state"][0]
    torch.testing.assert_close(loaded.duals.optimizer.state_dict()["state"][0], adam)


def test_resume_from_checkpoint_continues_exactly(tmp_path: Path) -> None:
    """1 epoch + resume to 3 = 3 epochs straight: parameters and multipliers bit for bit."""

    def module() -> NormOnSimplex:
        return NormOnSimplex(capped=True, duals=DualAscent(dual_optimizer="adam", dual_lr=0.05))

    straight = module()
    trainer(tmp_path / "straight", epochs=3).fit(straight)
    trainer(tmp_path / "first", epochs=1, enable_checkpointing=True).fit(module())
    resumed = module()
    checkpoint = next((tmp_path / "first").rglob("*.ckpt"))
    trainer(tmp_path / "resumed", epochs=3).fit(resumed, ckpt_path=checkpoint)
    torch.testing.assert_close(resumed.x, straight.x, rtol=0, atol=0)
    torch.testing.assert_close(resumed.duals.flat, straight.duals.flat, rtol=0, atol=0)
    assert resumed.duals.primal_steps == straight.duals.primal_steps == 300


def test_gradient_accumulation_steps_the_duals_once_per_optimizer_step(tmp_path: Path) -> None:
    """accumulate_grad_batches=4 over 100 batches: 25 optimizer steps, 25 dual steps, and the
    dual step uses the mean of the 4 recorded residuals (equal here, so x matches 25 steps)."""
    accumulated = NormOnSimplex(duals=DualAscent(dual_lr=0.1))
    trainer(tmp_path, epochs=1, accumulate_grad_batches=4).fit(accumulated)
    assert accumulated.duals.primal_steps == accumulated.duals.dual_steps == 25
    plain = NormOnSimplex(duals=DualAscent(dual_lr=0.1))
    trainer(tmp_path, epochs=1, max_steps=25).fit(plain)
    torch.testing.assert_close(accumulated.duals.flat, plain.duals.flat)


class ManualSteps(NormOnSimplex):
    """Manual optimization: the module steps both optimizers itself."""

    def __init__(self) -> None:
        super().__init__(duals=DualAscent(dual_lr=0.1))
        self.automatic_optimization = False

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        optimizer = self.optimizers()
        lagrangian = super().training_step(batch, batch_idx)
        optimizer.zero_grad()
        self.manual_backward(lagrangian)
        optimizer.step()
        self.dual_step()
        return lagrangian


def test_manual_optimization_calls_dual_step_itself(tmp_path: Path) -> None:
    """The same 300 steps by hand reach the same KKT point, one dual step per step."""
    module = ManualSteps()
    trainer(tmp_path, epochs=3).fit(module)
    assert module.duals.dual_steps == 300
    torch.testing.assert_close(module.x.detach(), torch.full((SIZE,), 0.25, dtype=torch.float64))
    torch.testing.assert_close(module.duals.multipliers["sum"], torch.tensor([-0.5]).double())


class PlainLoss(NormOnSimplex):
    """Returns the objective alone (like a penalty mode): the duals never move."""

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        return self.x.square().sum() + (self.x.sum() - 1.0).square()


def test_a_plain_loss_takes_no_dual_step(tmp_path: Path) -> None:
    """Without a `lagrangian` call there are no multipliers and no dual steps."""
    module = PlainLoss()
    trainer(tmp_path, epochs=1, max_steps=5).fit(module)
    assert module.duals.primal_steps == 0 and module.duals.flat.numel() == 0


class SkipsSuper(NormOnSimplex):
    """An optimizer_step override that forgets super(): the duals would never move."""

    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any, closure: Any = None):
        optimizer.step(closure=closure)


def test_optimizer_step_override_without_super_is_refused(tmp_path: Path) -> None:
    """The fit stops within two steps with an error naming the missing super() call."""
    fit = trainer(tmp_path, epochs=1)
    with pytest.raises(RuntimeError, match=r"must call super\(\).optimizer_step"):
        fit.fit(SkipsSuper())
    assert fit.global_step <= 2


@pytest.mark.slow
def test_two_ddp_processes_take_the_single_process_steps(tmp_path: Path) -> None:
    """Under DDP (2 CPU processes, gloo) every rank sees the same problem: the averaged
    gradients and residuals give the single process's parameters and multipliers."""
    single = NormOnSimplex(capped=True, duals=DualAscent(dual_lr=0.1))
    trainer(tmp_path / "single", epochs=1, max_steps=50).fit(single)
    ddp = trainer(
        tmp_path / "ddp",
        epochs=1,
        limit_train_batches=50,
        accelerator="cpu",
        devices=2,
        strategy="ddp_fork",  # ranks start with the test's imports done (spawn: seconds each)
        enable_checkpointing=True,
    )
    ddp.fit(NormOnSimplex(capped=True, duals=DualAscent(dual_lr=0.1)))
    saved = torch.load(next((tmp_path / "ddp").rglob("*.ckpt")), weights_only=True)
    assert saved["global_step"] == 50
    torch.testing.assert_close(saved["state_dict"]["x"], single.x.detach())
    torch.testing.assert_close(saved["state_dict"]["duals.flat"], single.duals.flat)
    assert float(single.duals.flat.abs().min()) > 0, "both multipliers must move to mean much"
