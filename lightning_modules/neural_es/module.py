"""Neural-ES as a LightningModule: manual optimisation from black-box evaluations only.

Each training batch is `K` preferences `[K, M]` from `optiforge.datamodules.PreferenceDataModule`;
the step samples `N` solutions per preference from the Pareto set model, evaluates them through an
`EvaluationBudget` (the 1e20 out-of-box penalty of the authors' code), ranks them by the
scalarisation and steps the optimiser on the natural-gradient surrogate (autograd through the
network only, never through the objectives). Training stops when the next step would exceed
`max_evaluations`. Validation answers the lattice preferences of the val batch with the block means
and logs IGD / hypervolume of those answers and of the archive of every evaluated point, and a
Pareto-front figure to W&B.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import lightning as L
import torch
from lightning.pytorch.loggers import WandbLogger
from torch import Tensor

from optiforge.lightning_modules.neural_es.es_step import default_samples, neural_es_step
from optiforge.lightning_modules.neural_es.front_figure import front_figure
from optiforge.lightning_modules.neural_es.model import ParetoSetModel
from optiforge.problems.multiobjective.budget import EvaluationBudget
from optiforge.problems.multiobjective.metrics import hypervolume, igd
from optiforge.problems.multiobjective.registry import make_problem
from optiforge.problems.multiobjective.scalarization import check_scalarization


class NeuralES(L.LightningModule):
    """Args:
    problem: a name of `optiforge.problems.multiobjective.PROBLEMS`. dim: number of variables.
    problem_seed: rotation seed of the PSL problems. dtlz_objectives: DTLZ's objective count.
    num_blocks: Gaussian blocks (must divide dim). hidden_sizes: MLP widths. rank: low-rank
    factors per block. samples_per_preference: N (None: 2 + round(1.5 ln D)).
    scalarization: "tchebycheff" or "pbi"; pbi_theta: PBI's penalty. ideal: the scalarisation's
    ideal point, "running" (minimum of the evaluated objectives) or "known" (the problem's exact
    one, as the authors' code uses on its suite). max_evaluations: the
    training budget (None: unlimited). archive_size: capacity of the non-dominated archive.
    lr: Adam (amsgrad) learning rate when no optimizer is configured. seed: sampling seed.
    """

    def __init__(
        self,
        problem: str = "psl1",
        dim: int = 32,
        problem_seed: int = 1,
        dtlz_objectives: int = 3,
        num_blocks: int = 16,
        hidden_sizes: tuple[int, ...] = (256, 256),
        rank: int = 1,
        samples_per_preference: int | None = None,
        scalarization: Literal["tchebycheff", "pbi"] = "tchebycheff",
        pbi_theta: float = 5.0,
        ideal: Literal["running", "known"] = "known",
        max_evaluations: int | None = 100_000,
        archive_size: int = 1000,
        lr: float = 1e-3,
        seed: int = 0,
    ) -> None:
        super().__init__()
        check_scalarization(scalarization, pbi_theta)
        if ideal not in ("running", "known"):
            raise ValueError(f"ideal must be one of ['running', 'known'], got {ideal!r}")
        if samples_per_preference is not None and samples_per_preference < 2:
            raise ValueError(
                f"samples_per_preference must be >= 2 or None, got {samples_per_preference}"
            )
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.problem = make_problem(problem, dim, problem_seed, dtlz_objectives)
        self.budget = EvaluationBudget(self.problem, max_evaluations, "penalty", 1e20, archive_size)
        self.model = ParetoSetModel(
            dim, self.problem.num_obj, num_blocks, tuple(hidden_sizes), rank
        )
        self.samples = samples_per_preference or default_samples(dim)
        if ideal == "known":
            start = self.problem.known_ideal()
        else:
            start = torch.full((self.problem.num_obj,), math.inf, dtype=torch.float64)
        self.register_buffer("ideal", start)
        self.front = self.problem.pareto_front(300 if self.problem.num_obj == 2 else 990)
        self.generator: torch.Generator | None = None
        self.answers: Tensor | None = None

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.model.parameters(), lr=self.hparams.lr, amsgrad=True)

    def _generator(self) -> torch.Generator:
        if self.generator is None or self.generator.device != self.device:
            self.generator = torch.Generator(device=self.device).manual_seed(self.hparams.seed)
        return self.generator

    def _preferences(self, batch: Tensor) -> Tensor:
        """The batch as float preferences, refused unless it has the problem's objective count."""
        if batch.ndim != 2 or batch.shape[1] != self.problem.num_obj:
            raise ValueError(
                f"preference batches must be [n, {self.problem.num_obj}] for "
                f"{self.hparams.problem}; set the data's num_obj to {self.problem.num_obj}"
            )
        return batch.float()

    def training_step(self, batch: Tensor, batch_idx: int) -> Tensor | None:
        prefs = self._preferences(batch)
        needed = len(prefs) * self.samples
        if self.budget.remaining is not None and self.budget.remaining < needed:
            self.trainer.should_stop = True
            return None
        step = neural_es_step(
            self.model,
            self.budget,
            prefs,
            self.samples,
            self.ideal,
            self._generator(),
            self.hparams.scalarization,
            self.hparams.pbi_theta,
        )
        self.ideal.copy_(step.ideal)
        optimizer = self.optimizers()
        optimizer.zero_grad()
        self.manual_backward(step.loss)
        optimizer.step()
        self.log("train/loss", step.loss.detach(), prog_bar=True, batch_size=len(prefs))
        self.log("train/evaluations", float(self.budget.used), batch_size=len(prefs))
        return step.loss.detach()

    def answer(self, prefs: Tensor) -> Tensor:
        """The model's solutions (block means) for `prefs [n, M]`, clamped into the box."""
        with torch.no_grad():
            x, _ = self.model(prefs.float())
        lower, upper = self.problem.bounds(x.double())
        return torch.minimum(torch.maximum(x.double(), lower), upper)

    def validation_step(self, batch: Tensor, batch_idx: int) -> None:
        answers = self.problem.evaluate(
            self.answer(self._preferences(batch))
        )  # scoring only: outside the budget
        self.answers = answers
        reference = torch.full((self.problem.num_obj,), 1.1, dtype=torch.float64)
        archive = self.budget.archive.f
        if archive is None:
            archive = torch.empty(0, self.problem.num_obj, dtype=torch.float64)
        metrics = {
            "val/igd_model": igd(answers, self.front),
            "val/hv_model": hypervolume(answers, reference),
            "val/igd_archive": igd(archive, self.front),
            "val/hv_archive": hypervolume(archive, reference),
        }
        self.log_dict(metrics, batch_size=len(batch), prog_bar=True)

    def on_validation_epoch_end(self) -> None:
        logger = self.logger
        if (
            not isinstance(logger, WandbLogger)
            or self.answers is None
            or not self.trainer.is_global_zero
        ):
            return
        fronts = {"model": self.answers}
        if self.budget.archive.f is not None:
            fronts["archive"] = self.budget.archive.f
        title = f"{self.hparams.problem} D={self.hparams.dim}, {self.budget.used} evaluations"
        logger.log_image(key="val/pareto_front", images=[front_figure(fronts, self.front, title)])

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["neural_es"] = {
            "used": self.budget.used,
            "archive": self.budget.archive.state_dict(),
            "generator": None if self.generator is None else self.generator.get_state(),
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        state = checkpoint.get("neural_es")
        if state is None:
            return
        self.budget.used = state["used"]
        self.budget.archive.load_state_dict(state["archive"])
        if state["generator"] is not None:
            self.generator = torch.Generator(device=self.device)
            self.generator.set_state(state["generator"])
