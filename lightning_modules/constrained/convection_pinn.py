"""Physics-informed network for u_t + beta u_x = 0: weighted-penalty PINN vs equality constraints.

Domain x in [0, 2 pi], t in [0, 1]; initial condition u(x, 0) = sin x; periodic boundary
u(0, t) = u(2 pi, t); exact solution u = sin(x - beta t). The PINN baseline minimizes
lambda_pde * PDE + lambda_ic * IC + lambda_bc * BC (mean squared residuals; the paper's
weights are (1, 100, 100)). The equality-constrained formulation (Barthakur & Chamon) minimizes
the PDE residual subject to IC = 0 and BC = 0, two scalar equality constraints enforced by
`LagrangianMixin`.
"""

from __future__ import annotations

from typing import Literal

import lightning as L
import torch
from torch import nn

from optiforge.lightning_modules.constrained.lagrangian import LagrangianMixin
from optiforge.optimizers.constraint_residual import equality
from optiforge.optimizers.dual_ascent import DualAscent
from optiforge.problems.convection import X_MAX

PINNMode = Literal["penalty", "lagrangian"]
BOUNDARY_CHECK_POINTS = 1000


def tanh_mlp(hidden_layers: int, width: int) -> nn.Sequential:
    """(x, t) -> u: `hidden_layers` tanh layers of `width` units, linear output."""
    layers: list[nn.Module] = []
    features = 2
    for _ in range(hidden_layers):
        layers += [nn.Linear(features, width), nn.Tanh()]
        features = width
    layers.append(nn.Linear(features, 1))
    return nn.Sequential(*layers)


def exact_solution(points: torch.Tensor, beta: float) -> torch.Tensor:
    """sin(x - beta t) at points [N, 2] of (x, t)."""
    return torch.sin(points[:, 0] - beta * points[:, 1])


def convection_residuals(
    net: nn.Module,
    interior: torch.Tensor,
    initial_x: torch.Tensor,
    boundary_t: torch.Tensor,
    beta: float,
) -> dict[str, torch.Tensor]:
    """Mean squared PDE, initial-condition and periodic-boundary residuals of `net`."""
    x = interior[:, :1].detach().requires_grad_(True)
    t = interior[:, 1:].detach().requires_grad_(True)
    u = net(torch.cat([x, t], dim=1))
    du_dx, du_dt = torch.autograd.grad(u.sum(), (x, t), create_graph=True)
    pde = (du_dt + beta * du_dx).square().mean()
    u0 = net(torch.cat([initial_x, torch.zeros_like(initial_x)], dim=1))
    ic = (u0 - torch.sin(initial_x)).square().mean()
    left = net(torch.cat([torch.zeros_like(boundary_t), boundary_t], dim=1))
    right = net(torch.cat([torch.full_like(boundary_t, X_MAX), boundary_t], dim=1))
    bc = (left - right).square().mean()
    return {"pde": pde, "ic": ic, "bc": bc}


class ConvectionPINN(LagrangianMixin, L.LightningModule):
    """MLP u(x, t) trained on the convection equation (batches from `ConvectionDataModule`).

    Validation/test log `rel_l2` = ||u - u*|| / ||u*|| on the grid; test also logs the largest
    initial-condition violation max_x |u(x, 0) - sin x| and periodic-boundary violation
    max_t |u(0, t) - u(2 pi, t)| on 1000 evenly spaced points, and their maximum.

    Args:
        beta: convection speed (> 0); larger is harder for PINNs (the paper uses 30 and 50).
        hidden_layers: tanh hidden layers (paper: 4).
        width: units per hidden layer (paper: 50).
        constraint_mode: "penalty" (weighted PINN loss) or "lagrangian" (IC = 0 and BC = 0 as
            equality constraints, enforced by `duals`).
        pde_weight, ic_weight, bc_weight: penalty weights ("penalty" mode).
        duals: the dual ascent of "lagrangian" mode (see `LagrangianMixin`).
    """

    def __init__(
        self,
        beta: float = 10.0,
        hidden_layers: int = 4,
        width: int = 50,
        constraint_mode: PINNMode = "lagrangian",
        pde_weight: float = 1.0,
        ic_weight: float = 100.0,
        bc_weight: float = 100.0,
        duals: DualAscent | None = None,
    ) -> None:
        super().__init__(duals=duals)
        if constraint_mode not in ("penalty", "lagrangian"):
            raise ValueError(
                "model.constraint_mode must be one of ['lagrangian', 'penalty'], "
                f"got {constraint_mode!r}"
            )
        if not beta > 0:
            raise ValueError(f"model.beta must be > 0, got {beta}")
        for name, value in (("hidden_layers", hidden_layers), ("width", width)):
            if value < 1:
                raise ValueError(f"model.{name} must be >= 1, got {value}")
        for name, value in (
            ("pde_weight", pde_weight),
            ("ic_weight", ic_weight),
            ("bc_weight", bc_weight),
        ):
            if not value >= 0:
                raise ValueError(f"model.{name} must be >= 0, got {value}")
        self.save_hyperparameters(ignore=["duals"])
        self.net = tanh_mlp(hidden_layers, width)
        self.beta = beta
        self.constraint_mode = constraint_mode
        self.weights = {"pde": pde_weight, "ic": ic_weight, "bc": bc_weight}
        self._squared_error = torch.zeros(())
        self._squared_norm = torch.zeros(())

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        """u at points [N, 2] of (x, t), shape [N]."""
        return self.net(points).squeeze(-1)

    def training_step(
        self, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor], batch_idx: int
    ) -> torch.Tensor:
        residuals = convection_residuals(self.net, *batch, beta=self.beta)
        self.log_dict({f"train/{name}": value for name, value in residuals.items()})
        if self.constraint_mode == "lagrangian":
            constraints = {
                "initial": equality(residuals["ic"]),
                "boundary": equality(residuals["bc"]),
            }
            self.log("train/loss", residuals["pde"])  # the objective; the mixin logs the rest
            return self.lagrangian(residuals["pde"], constraints)
        loss = sum(self.weights[name] * value for name, value in residuals.items())
        self.log("train/loss", loss)
        return loss

    def on_validation_epoch_start(self) -> None:
        self._reset_error()

    def on_test_epoch_start(self) -> None:
        self._reset_error()

    def _reset_error(self) -> None:
        self._squared_error = torch.zeros((), dtype=self.dtype, device=self.device)
        self._squared_norm = torch.zeros((), dtype=self.dtype, device=self.device)

    def _accumulate(self, points: torch.Tensor) -> None:
        target = exact_solution(points, self.beta)
        self._squared_error += (self(points) - target).square().sum()
        self._squared_norm += target.square().sum()

    def validation_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        self._accumulate(batch[0])

    def test_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        self._accumulate(batch[0])

    def relative_l2(self) -> torch.Tensor:
        return (self._squared_error / self._squared_norm).sqrt()

    def on_validation_epoch_end(self) -> None:
        self.log("val/rel_l2", self.relative_l2(), prog_bar=True)

    def on_test_epoch_end(self) -> None:
        self.log_dict({"test/rel_l2": self.relative_l2(), **self.boundary_violations()})

    def boundary_violations(self) -> dict[str, torch.Tensor]:
        """Largest initial and periodic-boundary violations on evenly spaced check points."""
        x = torch.linspace(0.0, X_MAX, BOUNDARY_CHECK_POINTS, device=self.device)
        t = torch.linspace(0.0, 1.0, BOUNDARY_CHECK_POINTS, device=self.device)
        with torch.no_grad():
            initial = (self(torch.stack([x, torch.zeros_like(x)], 1)) - torch.sin(x)).abs().max()
            left = self(torch.stack([torch.zeros_like(t), t], 1))
            right = self(torch.stack([torch.full_like(t, X_MAX), t], 1))
            boundary = (left - right).abs().max()
        return {
            "test/max_ic_violation": initial,
            "test/max_bc_violation": boundary,
            "test/max_boundary_violation": torch.maximum(initial, boundary),
        }
