"""DC3's equality completion and inequality correction (Donti, Rolnick & Kolter 2021).

Completion: with linear equalities A y = x (every family here), y splits into n - m
independent coordinates z and m dependent ones, y_dep = A_dep^{-1} (x - A_ind z), so equalities
hold exactly for any z. DC3 takes a fixed subset of columns; here the dependent columns are the
first m pivots of a column-pivoted QR of A, which keeps A_dep well conditioned (a bad subset
would amplify rounding and the correction's steps).

Correction: gradient steps with momentum on ||relu(g(complete(z)))||^2 with respect to z; the
gradient flows through the completion (dy_dep/dz = -A_dep^{-1} A_ind), so equalities stay
exact. Unrolled (differentiable) while training, detached at test time. DC3's default step
1e-7 was tuned for its unnormalized violations on its own data; on these families it barely
moves (see the benchmark), so it is configurable and the benchmark reports the value it uses.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import torch
from torch import Tensor

from optiforge.problems.constrained import ConstrainedFamily


class EqualityCompletion:
    """Independent/dependent split of y for A y = x (A [m, n] of full row rank)."""

    def __init__(self, A: Tensor) -> None:
        m, n = A.shape
        if m >= n:
            raise ValueError(f"A must have fewer rows than columns, got shape {tuple(A.shape)}")
        _, _, pivots = scipy.linalg.qr(A.detach().cpu().numpy(), pivoting=True, mode="economic")
        dependent = np.sort(pivots[:m])
        independent = np.setdiff1d(np.arange(n), dependent)
        self.dependent = torch.from_numpy(dependent).to(A.device)
        self.independent = torch.from_numpy(independent).to(A.device)
        dependent_inverse = torch.linalg.inv(A[:, self.dependent])
        self.solve_x = dependent_inverse  # y_dep = solve_x x - solve_z z
        self.solve_z = dependent_inverse @ A[:, self.independent]
        self.order = torch.argsort(torch.cat([self.independent, self.dependent]))

    def complete(self, z: Tensor, x: Tensor) -> Tensor:
        """y [B, n] with y_ind = z and A y = x."""
        dependent = x @ self.solve_x.T - z @ self.solve_z.T
        return torch.cat([z, dependent], dim=-1)[:, self.order]

    def partial(self, y: Tensor) -> Tensor:
        """The independent coordinates z [B, n - m] of y."""
        return y[:, self.independent]

    def to(self, device: torch.device | str) -> EqualityCompletion:
        """This completion with its tensors on `device`."""
        for name in ("dependent", "independent", "solve_x", "solve_z", "order"):
            setattr(self, name, getattr(self, name).to(device))
        return self


class InequalityCorrection:
    """Args: correction steps while training and at test (>= 0), step size lr (> 0), momentum
    in [0, 1)."""

    def __init__(
        self, steps_train: int = 10, steps_test: int = 10, lr: float = 1e-7, momentum: float = 0.5
    ) -> None:
        checks = {
            "steps_train": (steps_train >= 0, ">= 0"),
            "steps_test": (steps_test >= 0, ">= 0"),
            "lr": (lr > 0, "> 0"),
            "momentum": (0 <= momentum < 1, "in [0, 1)"),
        }
        for field, (ok, allowed) in checks.items():
            if not ok:
                raise ValueError(f"{field} must be {allowed}, got {locals()[field]}")
        self.steps_train, self.steps_test = steps_train, steps_test
        self.lr, self.momentum = lr, momentum

    def __call__(
        self,
        family: ConstrainedFamily,
        completion: EqualityCompletion,
        y: Tensor,
        x: Tensor,
        training: bool,
    ) -> Tensor:
        """Corrected y [B, n] (equalities exact through the completion)."""
        graph = training and torch.is_grad_enabled() and y.requires_grad
        z = completion.partial(y if graph else y.detach())
        velocity = torch.zeros_like(z)
        with torch.enable_grad():
            for _ in range(self.steps_train if training else self.steps_test):
                point = z if graph else z.detach().requires_grad_(True)
                violation = family.ineq_residual(completion.complete(point, x), x).relu()
                (gradient,) = torch.autograd.grad(
                    violation.square().sum(), point, create_graph=graph
                )
                velocity = self.momentum * velocity + self.lr * gradient
                z = point - velocity
        return completion.complete(z if graph else z.detach(), x)
