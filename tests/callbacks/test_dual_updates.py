"""DualUpdates under Lightning: KKT point, checkpoint resume, logging, accumulation, errors."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch

from optiforge.callbacks import DualUpdates, lagrangian_step
from optiforge.datamodules.full_batch import full_batch_loader
from optiforge.optimizers import equality, inequality
from tests.cli_helpers import PROJECT_ROOT, run_cli, run_train_py, written_files
from tests.wandb_offline_reader import history_values, read_records


def problem() -> tuple[torch.Tensor, ...]:
    """min 0.5||Ax - b||^2 s.t. Cx = d, and its KKT solution (x*, mu*)."""
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(10, 4, generator=generator, dtype=torch.float64)
    b = torch.randn(10, generator=generator, dtype=torch.float64)
    c = torch.randn(2, 4, generator=generator, dtype=torch.float64)
    d = torch.randn(2, generator=generator, dtype=torch.float64)
    kkt = torch.zeros(6, 6, dtype=torch.float64)
    kkt[:4, :4], kkt[:4, 4:], kkt[4:, :4] = a.T @ a, c.T, c
    solution = torch.linalg.solve(kkt, torch.cat([a.T @ b, d]))
    return a, b, c, d, solution[:4], solution[4:]


class ConstrainedLeastSquares(L.LightningModule):
    """x in R^4 fitted to (A, b) under Cx = d; the batch carries A and b."""

    def __init__(self, lr: float = 0.05, with_inequality: bool = False) -> None:
        super().__init__()
        self.x = torch.nn.Parameter(torch.zeros(4, dtype=torch.float64))
        _, _, self.c, self.d, _, _ = problem()
        self.lr = lr
        self.with_inequality = with_inequality

    @lagrangian_step
    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        a, b = batch
        loss = 0.5 * (a @ self.x - b).square().mean() * 10
        constraints = {"linear": equality(self.c @ self.x - self.d)}
        if self.with_inequality:
            constraints["bound"] = inequality(self.x[:1] - 10.0)
        return {"loss": loss, "constraints": constraints}

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=self.lr)

    def train_dataloader(self) -> torch.utils.data.DataLoader:
        a, b, *_ = problem()
        return full_batch_loader((a, b), steps=500)


def trainer(tmp_path: Path, epochs: int, **kwargs) -> L.Trainer:
    options = {
        "max_epochs": epochs,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": tmp_path,
        "callbacks": [DualUpdates(dual_lr=0.05)],
        "log_every_n_steps": 1,
    }
    options.update(kwargs)
    return L.Trainer(**options)


def dual_callback(fit: L.Trainer) -> DualUpdates:
    return next(cb for cb in fit.callbacks if isinstance(cb, DualUpdates))


def test_lightning_fit_reaches_the_kkt_point(tmp_path: Path) -> None:
    """A Lightning fit with DualUpdates reaches (x*, mu*) and logs the multipliers."""
    module = ConstrainedLeastSquares()
    fit = trainer(tmp_path, epochs=10, enable_checkpointing=False)
    fit.fit(module)
    *_, x_star, mu_star = problem()
    duals = dual_callback(fit).duals
    assert duals.dual_steps == fit.global_step == 5000
    assert float((module.x.detach() - x_star).abs().max()) < 1e-4
    assert float((duals.multipliers["linear"] - mu_star).abs().max()) < 1e-4
    metrics = fit.callback_metrics
    torch.testing.assert_close(
        metrics["constraints/linear/multiplier_0"].double(), duals.multipliers["linear"][0]
    )
    assert "constraints/objective" in metrics
    # the training step is the module's own method again after fit
    assert "training_step" not in vars(module)


def test_resume_from_checkpoint_continues_exactly(tmp_path: Path) -> None:
    """2 epochs + resume to 4 = 4 epochs straight: parameters and multipliers bit for bit."""
    straight_module = ConstrainedLeastSquares(with_inequality=True)
    straight = trainer(tmp_path / "straight", epochs=4, enable_checkpointing=False)
    straight.fit(straight_module)

    first = trainer(tmp_path / "first", epochs=2)
    first.fit(ConstrainedLeastSquares(with_inequality=True))
    checkpoint = next((tmp_path / "first").rglob("*.ckpt"))
    assert "DualUpdates" in torch.load(checkpoint, weights_only=False)["callbacks"]
    resumed_module = ConstrainedLeastSquares(with_inequality=True)
    resumed = trainer(tmp_path / "resumed", epochs=4)
    resumed.fit(resumed_module, ckpt_path=checkpoint)

    torch.testing.assert_close(resumed_module.x, straight_module.x, rtol=0, atol=0)
    for name in ("linear", "bound"):
        torch.testing.assert_close(
            dual_callback(resumed).duals.multipliers[name],
            dual_callback(straight).duals.multipliers[name],
            rtol=0,
            atol=0,
        )
    assert dual_callback(resumed).duals.primal_steps == 2000


def test_gradient_accumulation_steps_duals_once_per_optimizer_step(tmp_path: Path) -> None:
    """With accumulate_grad_batches=4 the duals count optimizer steps (125), not batches."""
    fit = trainer(tmp_path, epochs=1, accumulate_grad_batches=4, enable_checkpointing=False)
    fit.fit(ConstrainedLeastSquares())
    duals = dual_callback(fit).duals
    assert fit.global_step == duals.primal_steps == 125


@pytest.mark.slow
def test_two_ddp_processes_take_the_single_process_steps(tmp_path: Path) -> None:
    """Under DDP (2 CPU processes, gloo) with the same full batch on both ranks, the decorated
    step's Lagrangian and the averaged residuals give the parameters and multipliers of one
    process after the same 50 steps."""
    single_module = ConstrainedLeastSquares(with_inequality=True)
    single = trainer(tmp_path / "single", epochs=1, max_steps=50, enable_checkpointing=False)
    single.fit(single_module)
    ddp = trainer(
        tmp_path / "ddp",
        epochs=1,
        limit_train_batches=50,
        accelerator="cpu",
        devices=2,
        strategy="ddp_spawn",
    )
    ddp.fit(ConstrainedLeastSquares(with_inequality=True))
    saved = torch.load(next((tmp_path / "ddp").rglob("*.ckpt")), weights_only=False)
    assert saved["global_step"] == 50
    torch.testing.assert_close(saved["state_dict"]["x"], single_module.x.detach())
    multipliers = saved["callbacks"]["DualUpdates"]["duals"]["multipliers"]
    for name, value in dual_callback(single).duals.multipliers.items():
        torch.testing.assert_close(multipliers[name], value)
    assert float(multipliers["linear"].abs().min()) > 0, "the duals must move to mean much"


class Unconstrained(ConstrainedLeastSquares):
    @lagrangian_step
    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int):
        a, b = batch
        return (a @ self.x - b).square().mean()


class Undecorated(ConstrainedLeastSquares):
    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        return ConstrainedLeastSquares.training_step.__wrapped__(self, batch, batch_idx)


class Manual(ConstrainedLeastSquares):
    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False


@pytest.mark.parametrize(
    ("module", "message"),
    [
        (Unconstrained(), "training_step must return a dict with 'loss' and 'constraints'"),
        (Manual(), "DualUpdates needs automatic optimization"),
        (
            Undecorated(),
            r"Undecorated.training_step must be decorated with "
            r"@optiforge.callbacks.lagrangian_step",
        ),
    ],
)
def test_misuse_fails_with_a_clear_message(
    module: L.LightningModule, message: str, tmp_path: Path
) -> None:
    """Each misuse of the contract is one ValueError naming what is missing."""
    with pytest.raises(ValueError, match=message):
        trainer(tmp_path, epochs=1, max_steps=2, enable_checkpointing=False).fit(module)


def test_undecorated_step_is_refused_before_any_step(tmp_path: Path) -> None:
    """The contract is checked at fit start: no training step runs, no parameter moves."""
    module = Undecorated()
    fit = trainer(tmp_path, epochs=1, max_steps=2, enable_checkpointing=False)
    with pytest.raises(ValueError, match="must be decorated"):
        fit.fit(module)
    assert fit.global_step == 0
    torch.testing.assert_close(module.x.detach(), torch.zeros(4, dtype=torch.float64))


def test_train_py_refuses_an_undecorated_module_in_one_line_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`train.py fit` with DualUpdates and a module that breaks the contract ends with status 2
    and one stderr line naming what is missing; the run directory stays empty."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_MODE", "offline")
    module = f"{Undecorated.__module__}.Undecorated"
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", "--model", module, "--trainer.callbacks+=optiforge.callbacks.DualUpdates")
    stderr = capfd.readouterr().err
    assert exit_info.value.code == 2, stderr[-3000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr[-3000:]
    assert (
        "Undecorated.training_step must be decorated with @optiforge.callbacks.lagrangian_step"
        in lines[0]
    )
    assert written_files(tmp_path) == []


class MethodWatch(L.Callback):
    """Records, at every batch, whether the module's instance shadows its class methods."""

    def __init__(self) -> None:
        self.instance_attributes: list[set[str]] = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self.instance_attributes.append(set(vars(pl_module)) & {"training_step", "backward"})


def test_module_methods_are_never_replaced_on_the_instance(tmp_path: Path) -> None:
    """During fit the module runs its own class's training_step (no monkey-patching)."""
    watch = MethodWatch()
    fit = trainer(tmp_path, epochs=1, max_steps=3, enable_checkpointing=False)
    fit.callbacks.append(watch)
    fit.fit(ConstrainedLeastSquares())
    assert watch.instance_attributes == [set(), set(), set()]


def test_constraints_without_dual_updates_are_refused(tmp_path: Path) -> None:
    """A decorated step that returns constraints with no DualUpdates to enforce them fails."""
    fit = trainer(tmp_path, epochs=1, max_steps=1, enable_checkpointing=False, callbacks=[])
    with pytest.raises(
        ValueError, match="returned constraints but no optiforge.callbacks.DualUpdates"
    ):
        fit.fit(ConstrainedLeastSquares())


@pytest.mark.slow
def test_multipliers_and_residuals_reach_wandb_offline(tmp_path: Path) -> None:
    """`train.py fit` on the COMPAS parity config logs every multiplier and residual to W&B."""
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
