"""Teacher-student regression with a permutation network: constrained, relaxed or free.

- constrained: the tied (equivariant) network; training moves only the orbit values.
- relaxed: the unconstrained MLP of the same shape, initialized exactly at the point a
  constrained model of the same seed starts from (optionally perturbed off the subspace by
  `init_noise`), trained with an optional penalty `penalty * s(step) * dist^2` to the
  equivariant subspace, where s is 1 ("constant"), decays linearly to 0 over `penalty_steps`
  ("linear_decay"), or is 1 until `penalty_steps` and 0 after ("until": train near-constrained,
  then release).
- free: the unconstrained MLP with its own nn.Linear-style initialization.

Logged: train/val/test mse and relative mse (mse / variance of the targets), the relative
distance to the student's own equivariant subspace, and every `track_every` steps the distance
to each candidate hidden representation of the same dimension up to relabeling hidden neurons
(`hidden_rep/<name>`; which representation the network is near). At the end of training, the
landscape at the final point on the training set (`landscape/*`: gradient part outside the
subspace, Hessian eigenvalues inside and outside it); `end_measurements` keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import lightning as L
import torch
from torch.nn.functional import mse_loss

from optiforge.lightning_modules.equivariant.hidden_rep import (
    candidate_reps,
    distance_to_rep,
    rep_name,
)
from optiforge.lightning_modules.equivariant.landscape import landscape_at
from optiforge.problems.equivariant.permutation_mlp import PermutationMLP

TrainingMode = Literal["constrained", "relaxed", "free"]
PenaltySchedule = Literal["constant", "linear_decay", "until"]


class EquivariantRegressor(L.LightningModule):
    """Args:
    n, in_blocks, hidden_blocks, out_blocks: the network (blocks: trivial, set, pairs).
    mode: constrained, relaxed or free (module docstring).
    penalty: weight of the squared distance to the equivariant subspace (>= 0; not with
        constrained, where it is always 0).
    penalty_schedule, penalty_steps: how the weight changes over training steps.
    init_noise: std of a Gaussian perturbation of the relaxed start (0: exactly on the subspace).
    track_every: steps between candidate-representation distances (0: only at the end).
    candidate_hidden: hidden representations to measure the distance to; None = every one of
        the hidden dimension built from pairs, set and trivial blocks.
    """

    def __init__(
        self,
        n: int = 4,
        in_blocks: tuple[str, ...] = ("set",),
        hidden_blocks: tuple[str, ...] = ("set", "set", "set", "set"),
        out_blocks: tuple[str, ...] = ("trivial",),
        mode: TrainingMode = "constrained",
        penalty: float = 0.0,
        penalty_schedule: PenaltySchedule = "constant",
        penalty_steps: int = 0,
        init_noise: float = 0.0,
        track_every: int = 500,
        candidate_hidden: list[list[str]] | None = None,
    ) -> None:
        super().__init__()
        if mode not in ("constrained", "relaxed", "free"):
            raise ValueError(f"mode must be one of constrained, relaxed, free; got {mode!r}")
        if penalty < 0 or (penalty > 0 and mode == "constrained"):
            raise ValueError(f"penalty must be >= 0 and 0 in constrained mode, got {penalty}")
        if penalty_schedule not in ("constant", "linear_decay", "until"):
            raise ValueError(
                "penalty_schedule must be constant, linear_decay or until; "
                f"got {penalty_schedule!r}"
            )
        if penalty_schedule != "constant" and penalty_steps < 1:
            raise ValueError(
                f"penalty_steps must be >= 1 for {penalty_schedule}, got {penalty_steps}"
            )
        if init_noise < 0 or track_every < 0:
            raise ValueError(
                f"init_noise and track_every must be >= 0, got {init_noise}, {track_every}"
            )
        self.save_hyperparameters()
        shape = (n, in_blocks, hidden_blocks, out_blocks)
        if mode == "relaxed":
            start = PermutationMLP(*shape, tied=True)  # the constrained start of this seed
            self.network = PermutationMLP(*shape, tied=False)
            self.network.copy_dense_from(start)
            with torch.no_grad():
                for param in self.network.parameters():
                    param.add_(init_noise * torch.randn_like(param))
        else:
            self.network = PermutationMLP(*shape, tied=mode == "constrained")
        self.candidates = candidate_hidden or candidate_reps(n, self.network.hidden_rep.dim)
        self.end_measurements: dict[str, float] = {}
        self._last_batch: tuple[torch.Tensor, torch.Tensor] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)

    def penalty_weight(self, step: int) -> float:
        """penalty * s(step) for the configured schedule."""
        hp = self.hparams
        if hp.penalty_schedule == "linear_decay":
            return hp.penalty * max(0.0, 1 - step / hp.penalty_steps)
        if hp.penalty_schedule == "until":
            return hp.penalty if step < hp.penalty_steps else 0.0
        return hp.penalty

    def relative_distance(self) -> torch.Tensor:
        """Distance to the own equivariant subspace / norm of all dense parameters."""
        norm = torch.cat([p.reshape(-1) for p in self.network.dense_parameters()]).norm()
        return self.network.squared_distance().sqrt() / norm

    def objective(
        self, x: torch.Tensor, y: torch.Tensor, step: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Training loss at `step` (mse plus the scheduled penalty) and the mse."""
        mse = mse_loss(self(x), y)
        weight = self.penalty_weight(step)
        return (mse + weight * self.network.squared_distance() if weight > 0 else mse), mse

    def training_step(self, batch: Sequence[torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        self._last_batch = (x, y)
        loss, mse = self.objective(x, y, self.global_step)
        weight = self.penalty_weight(self.global_step)
        self.log_dict(
            {
                "train/loss": loss,
                "train/mse": mse,
                "train/relative_mse": mse / y.var(),
                "train/distance": self.relative_distance(),
                "train/penalty_weight": weight,
            }
        )
        every = self.hparams.track_every
        if every and self.global_step % every == 0:
            self.log_dict(self.candidate_distances())
        return loss

    def evaluate(self, batch: Sequence[torch.Tensor], split: str) -> None:
        x, y = batch
        mse = mse_loss(self(x), y)
        self.log_dict(
            {
                f"{split}/mse": mse,
                f"{split}/relative_mse": mse / y.var(),
                f"{split}/distance": self.relative_distance(),
            }
        )

    def validation_step(self, batch: Sequence[torch.Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "val")

    def test_step(self, batch: Sequence[torch.Tensor], batch_idx: int) -> None:
        self.evaluate(batch, "test")
        self.log_dict({f"test/{k}": v for k, v in self.end_measurements.items()})

    def candidate_distances(self) -> dict[str, float]:
        """Distance to each candidate hidden representation, relative to the parameter norm."""
        params = [p.detach() for p in self.network.dense_parameters()]
        norm = float(torch.cat([p.reshape(-1) for p in params]).norm())
        net = self.network
        return {
            f"hidden_rep/{rep_name(c)}": distance_to_rep(params, net.in_rep, net.out_rep, c) / norm
            for c in self.candidates
        }

    def measure(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
        """Landscape at the current point on (x, y) and the candidate distances."""
        landscape = {f"landscape/{k}": v for k, v in landscape_at(self.network, x, y).items()}
        return {**landscape, **self.candidate_distances()}

    def on_train_end(self) -> None:
        if self._last_batch is None:
            return
        self.end_measurements = self.measure(*self._last_batch)
        if self.logger is not None:
            self.logger.log_metrics(self.end_measurements, step=self.global_step)
