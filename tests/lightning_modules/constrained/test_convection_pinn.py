"""ConvectionPINN: residuals vanish on the exact solution, the contract, metrics, a real fit."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import pytest
import torch
from torch import nn

from optiforge.datamodules import ConvectionDataModule
from optiforge.lightning_modules.constrained import ConvectionPINN
from optiforge.lightning_modules.constrained.convection_pinn import (
    convection_residuals,
    exact_solution,
)
from optiforge.optimizers import DualAscent

BETA = 3.0


class Exact(nn.Module):
    """u(x, t) = sin(x - beta t) (+ optional perturbation eps * t * cos x)."""

    def __init__(self, beta: float, eps: float = 0.0) -> None:
        super().__init__()
        self.beta, self.eps = beta, eps

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        x, t = points[:, :1], points[:, 1:]
        return torch.sin(x - self.beta * t) + self.eps * t * torch.cos(x)


def collocation() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    data = ConvectionDataModule(num_interior=200, num_initial=50, num_boundary=50)
    data.setup("fit")
    return tuple(t.double() for t in data.collocation)


def test_exact_solution_has_zero_residuals() -> None:
    """The exact convection solution has PDE, initial and boundary residuals below 1e-20."""
    residuals = convection_residuals(Exact(BETA), *collocation(), beta=BETA)
    for name, value in residuals.items():
        assert float(value) < 1e-20, name


def test_perturbed_solution_residuals_by_hand() -> None:
    """u = exact + eps t cos x: u_t + beta u_x = eps cos x - eps beta t sin x; IC exact; BC 0."""
    eps = 0.1
    interior, initial, boundary = collocation()
    residuals = convection_residuals(Exact(BETA, eps), interior, initial, boundary, beta=BETA)
    x, t = interior[:, 0], interior[:, 1]
    expected_pde = (eps * torch.cos(x) - eps * BETA * t * torch.sin(x)).square().mean()
    torch.testing.assert_close(residuals["pde"], expected_pde)
    assert float(residuals["ic"]) < 1e-20 and float(residuals["bc"]) < 1e-20


def module(**kwargs: object) -> ConvectionPINN:
    pinn = ConvectionPINN(beta=BETA, hidden_layers=1, width=8, **kwargs).double()
    pinn.log_dict = lambda *args, **kwargs: None  # no trainer attached
    return pinn


def test_lagrangian_mode_is_pde_loss_under_two_scalar_equalities() -> None:
    """Lagrangian mode records scalar initial/boundary equalities and returns
    PDE + mu_bc * BC + mu_ic * IC (the PDE loss alone while the multipliers are zero)."""
    pinn = module(constraint_mode="lagrangian")
    batch = collocation()
    output = pinn.training_step(batch, 0)
    expected = convection_residuals(pinn.net, *batch, beta=BETA)
    torch.testing.assert_close(output, expected["pde"])
    assert pinn.duals.kinds == {"initial": "equality", "boundary": "equality"}
    for name, key in (("initial", "ic"), ("boundary", "bc")):
        torch.testing.assert_close(pinn.duals.last_residuals[name], expected[key].reshape(1))
    pinn.duals.flat.copy_(torch.tensor([3.0, -2.0]))  # sorted names: boundary, initial
    lagrangian = expected["pde"] + 3.0 * expected["bc"] - 2.0 * expected["ic"]
    torch.testing.assert_close(pinn.training_step(batch, 0), lagrangian)


def test_penalty_mode_is_the_weighted_sum() -> None:
    """Penalty mode returns pde_weight*pde + ic_weight*ic + bc_weight*bc."""
    pinn = module(constraint_mode="penalty", pde_weight=2.0, ic_weight=30.0, bc_weight=0.5)
    batch = collocation()
    parts = convection_residuals(pinn.net, *batch, beta=BETA)
    expected = 2.0 * parts["pde"] + 30.0 * parts["ic"] + 0.5 * parts["bc"]
    torch.testing.assert_close(pinn.training_step(batch, 0), expected)


def test_relative_l2_and_boundary_metrics() -> None:
    """Exact net: rel L2 = 0 and no violation; eps t cos x: the error norm ratio by hand."""
    pinn = module()
    data = ConvectionDataModule(grid_x=64, grid_t=20)
    data.setup("test")
    grid = data.grid.double()
    for eps in (0.0, 0.2):
        pinn.net = Exact(BETA, eps)
        pinn._reset_error()
        pinn._accumulate(grid)
        x, t = grid[:, 0], grid[:, 1]
        expected = (eps * t * torch.cos(x)).norm() / exact_solution(grid, BETA).norm()
        torch.testing.assert_close(pinn.relative_l2(), expected)
    pinn.net = Exact(BETA, 0.0).float()
    violations = pinn.float().boundary_violations()
    assert float(violations["test/max_boundary_violation"]) < 1e-5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"beta": 0.0}, "model.beta must be > 0"),
        ({"constraint_mode": "hard"}, "model.constraint_mode must be one of"),
        ({"width": 0}, "model.width must be >= 1"),
        ({"ic_weight": -1.0}, "model.ic_weight must be >= 0"),
    ],
)
def test_bad_model_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Bad beta, constraint_mode, width or ic_weight raise naming model.<field>."""
    with pytest.raises(ValueError, match=message):
        ConvectionPINN(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"num_interior": 0}, "data.num_interior must be >= 1"), ({"grid_t": 1}, "data.grid_t")],
)
def test_bad_data_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Bad num_interior or grid_t for the data module raise naming data.<field>."""
    with pytest.raises(ValueError, match=message):
        ConvectionDataModule(**kwargs)


def test_grid_is_periodic_open_in_x_and_closed_in_t() -> None:
    """The 8 x 3 test grid stops short of 2*pi in x and includes t = 0 and t = 1."""
    data = ConvectionDataModule(grid_x=8, grid_t=3)
    data.setup("test")
    assert data.grid.shape == (24, 2)
    assert float(data.grid[:, 0].max()) == pytest.approx(2 * math.pi * 7 / 8)
    assert sorted(set(data.grid[:, 1].tolist())) == [0.0, 0.5, 1.0]


class AdamPINN(ConvectionPINN):
    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=3e-3)


def test_constrained_fit_learns_the_solution(tmp_path: Path) -> None:
    """beta = 1, 600 full-batch steps of a 2 x 32 net: rel L2 drops from ~1 to well below 0.2."""
    L.seed_everything(0)
    pinn = AdamPINN(
        beta=1.0,
        hidden_layers=2,
        width=32,
        constraint_mode="lagrangian",
        duals=DualAscent(dual_lr=0.1),
    )
    data = ConvectionDataModule(
        num_interior=300, num_initial=64, num_boundary=64, steps_per_epoch=200
    )
    trainer = L.Trainer(
        max_epochs=3,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=tmp_path,
    )
    before = trainer.test(pinn, datamodule=data, verbose=False)[0]["test/rel_l2"]
    trainer.fit(pinn, datamodule=data)
    after = trainer.test(pinn, datamodule=data, verbose=False)[0]
    assert before > 0.7
    assert after["test/rel_l2"] < 0.2
    assert after["test/max_boundary_violation"] < 0.2
