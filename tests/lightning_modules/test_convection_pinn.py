"""ConvectionPINN: residuals vanish on the exact solution, loss contracts, metrics, a real fit."""

from __future__ import annotations

import math

import lightning as L
import pytest
import torch
from torch import nn

from datamodules.convection import ConvectionDataModule
from lightning_modules.constrained.convection_pinn import (
    ConvectionPINN,
    convection_residuals,
    exact_solution,
)
from optimizers.constraint_residual import ConstraintResidual

BETA = 3.0


class ExactNet(nn.Module):
    """u(x, t) = sin(x - beta t) plus a zero-weight parameter (so gradients exist)."""

    def __init__(self, beta: float, offset: float = 0.0) -> None:
        super().__init__()
        self.beta = beta
        self.offset = offset
        self.zero = nn.Parameter(torch.zeros(()))

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        u = torch.sin(points[:, 0] - self.beta * points[:, 1]) + self.offset
        return (u + self.zero).unsqueeze(-1)


def _batch() -> tuple[torch.Tensor, ...]:
    data = ConvectionDataModule(num_interior=200, num_initial=64, num_boundary=64)
    data.setup("fit")
    return tuple(t.double() for t in data.collocation)


def test_exact_solution_has_zero_residuals() -> None:
    residuals = convection_residuals(ExactNet(BETA).double(), *_batch(), beta=BETA)
    for name in ("pde", "ic", "bc"):
        assert residuals[name].item() < 1e-12, name
    wrong = convection_residuals(ExactNet(BETA).double(), *_batch(), beta=2 * BETA)
    assert wrong["pde"].item() > 1.0


def test_lagrangian_contract_and_penalty_sum() -> None:
    torch.manual_seed(0)
    batch = tuple(t.float() for t in _batch())
    model = ConvectionPINN(beta=BETA, hidden_layers=1, width=8, constraint_mode="lagrangian")
    out = model.training_step(batch, 0)
    assert set(out) == {"loss", "constraints"}
    assert set(out["constraints"]) == {"initial", "boundary"}
    for constraint in out["constraints"].values():
        assert isinstance(constraint, ConstraintResidual)
        assert constraint.kind == "equality" and constraint.value.dim() == 0
    penalty = ConvectionPINN(
        beta=BETA,
        hidden_layers=1,
        width=8,
        constraint_mode="penalty",
        pde_weight=2.0,
        ic_weight=30.0,
        bc_weight=7.0,
    )
    penalty.net.load_state_dict(model.net.state_dict())
    r = convection_residuals(model.net, *batch, beta=BETA)
    expected = 2.0 * r["pde"] + 30.0 * r["ic"] + 7.0 * r["bc"]
    assert torch.allclose(penalty.training_step(batch, 0), expected)
    assert torch.allclose(out["loss"], r["pde"])


def test_rel_l2_and_violations() -> None:
    data = ConvectionDataModule(grid_x=64, grid_t=20)
    data.setup("test")
    model = ConvectionPINN(beta=BETA, hidden_layers=1, width=4)
    model.net = ExactNet(BETA)
    model._reset_error()
    model.test_step((data.grid,), 0)
    assert model.relative_l2().item() < 1e-6
    assert model.boundary_violations()["test/max_boundary_violation"].item() < 1e-5
    model.net = ExactNet(BETA, offset=0.1)  # ||0.1|| / ||sin|| = 0.1 / sqrt(1/2) on the grid
    model._reset_error()
    model.test_step((data.grid,), 0)
    target = exact_solution(data.grid, BETA)
    expected = 0.1 * math.sqrt(len(target)) / target.norm().item()
    assert model.relative_l2().item() == pytest.approx(expected, rel=1e-4)
    assert model.boundary_violations()["test/max_ic_violation"].item() == pytest.approx(0.1, 1e-4)
    assert model.boundary_violations()["test/max_bc_violation"].item() < 1e-5


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"beta": -1.0}, "model.beta"),
        ({"width": 0}, "model.width"),
        ({"ic_weight": -1.0}, "model.ic_weight"),
        ({"constraint_mode": "x"}, "model.constraint_mode"),
    ],
)
def test_bad_model_arguments(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        ConvectionPINN(**kwargs)


def test_bad_data_arguments() -> None:
    with pytest.raises(ValueError, match="data.num_interior"):
        ConvectionDataModule(num_interior=0)


def test_lagrangian_without_dual_updates_fails() -> None:
    trainer = L.Trainer(
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = ConvectionPINN(hidden_layers=1, width=4, constraint_mode="lagrangian")
    model.configure_optimizers = lambda: torch.optim.Adam(model.parameters())
    with pytest.raises(ValueError, match="DualUpdates"):
        trainer.fit(model, ConvectionDataModule(num_interior=32, num_initial=8, num_boundary=8))


def test_short_fit_reduces_rel_l2() -> None:
    L.seed_everything(0)
    data = ConvectionDataModule(
        num_interior=200, num_initial=64, num_boundary=64, steps_per_epoch=300, grid_x=64, grid_t=20
    )
    model = ConvectionPINN(
        beta=1.0,
        hidden_layers=2,
        width=20,
        constraint_mode="penalty",
        ic_weight=10.0,
        bc_weight=10.0,
    )
    model.configure_optimizers = lambda: torch.optim.Adam(model.parameters(), lr=1e-2)
    kwargs = dict(
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    before = L.Trainer(**kwargs).test(model, data, verbose=False)[0]["test/rel_l2"]
    L.Trainer(max_epochs=1, num_sanity_val_steps=0, limit_val_batches=0, **kwargs).fit(model, data)
    after = L.Trainer(**kwargs).test(model, data, verbose=False)[0]["test/rel_l2"]
    assert after < 0.5 * before, (before, after)
