"""POMO teacher: REINFORCE with the shared multi-start baseline (Kwon et al. 2020).

For instance b with S sampled rollouts tau^1..tau^S (start s forced to customer s + 1),
reward R(tau) = -cost(tau) from the env, and the shared baseline is the mean over the starts:
    A^s = R(tau^s) - (1/S) sum_s' R(tau^s')          (= mean_s' cost - cost^s; zero mean per b)
    loss = -(1 / (S B)) sum_{b,s} A^s log pi(tau^s)   (A detached)
Evaluation decodes greedily (`teacher_inference.solve`), validates every reported solution with
`problems.vrp.validator.validate` and reports the validator's cost, the gap in percent to the
eval batch's reference (PyVRP or BKS) and the feasibility rate.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import lightning as L
import numpy as np
import torch
from torch import Tensor, nn
from torchmetrics import MeanMetric

from lightning_modules.mtlkd.attention_encoder import NORMS, Norm
from lightning_modules.mtlkd.teacher_inference import (
    INFERENCE_MODES,
    InferenceMode,
    num_starts_for,
    solve,
)
from lightning_modules.mtlkd.teacher_policy import POMOPolicy
from lightning_modules.mtlkd.teacher_weights import load_teacher_weights
from problems.vrp import env
from problems.vrp.instance import VRPBatch
from problems.vrp.validator import InfeasibleSolution, validate

if TYPE_CHECKING:
    from datamodules.vrp import VRPEvalBatch

EVAL_METRICS = ("cost", "gap", "feasible")


def pomo_advantage(cost: Tensor, num_starts: int) -> Tensor:
    """A [R] for costs [R] in the env's row layout r = s * B + b: -(cost - mean_s cost)."""
    per_start = cost.view(num_starts, -1)
    return (per_start.mean(0, keepdim=True) - per_start).reshape(-1)


class POMOTeacher(L.LightningModule):
    """Single-task POMO teacher of MTL-KD (heavy encoder, light decoder), trained by REINFORCE.

    Logs `train/loss`, `train/cost` (mean sampled env cost); per evaluation set name
    `<split>/<name>/{cost,gap,feasible}` (e.g. `val/CVRP/n50/gap`) and over all sets
    `<split>/{cost,gap,feasible}` with split `val` or `test`; `gap` is in percent, `feasible` the
    share of solutions the validator accepts (1.0 unless the env is broken; an infeasible
    solution is reported with a warning and excluded from cost and gap). It defines no
    `configure_optimizers`: the optimizer comes from the config, as for the classifier.
    `test_step` returns {"instances", "solutions", "costs", "name"} for `callbacks.VRPRoutePlot`.

    Args:
        embed_dim: embedding size d.
        num_layers: encoder layers.
        num_heads: attention heads (encoder and decoder glimpse).
        ff_dim: encoder feed-forward hidden size.
        norm: encoder normalisation, "instance" (POMO) or "rms" (RMSNorm).
        logit_clip: C of the tanh-clipped pointer logits.
        num_starts: POMO starts per instance in training and multi-start inference: n (all
            customers) when None, otherwise at most this many (n starts are many at n = 1000).
        val_inference: "greedy", "multistart" or "augment" (multi-start x 8 symmetries).
        test_inference: the same choice for `test`.
        weights: a weights-only file written by `teacher_weights.save_teacher_weights` (e.g.
            the shipped `weights/mtlkd/teacher_cvrp_n50.pt`) to start from; its architecture
            and feature layout must equal this model's. Not stored in the hyperparameters.
    """

    def __init__(
        self,
        embed_dim: int = 128,
        num_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        norm: Norm = "instance",
        logit_clip: float = 10.0,
        num_starts: int | None = None,
        val_inference: InferenceMode = "multistart",
        test_inference: InferenceMode = "augment",
        weights: str | None = None,
    ) -> None:
        super().__init__()
        positive = {
            "embed_dim": embed_dim,
            "num_layers": num_layers,
            "num_heads": num_heads,
            "ff_dim": ff_dim,
            "num_starts": 1 if num_starts is None else num_starts,
        }
        for field, value in positive.items():
            if value < 1:
                raise ValueError(f"model.{field} must be >= 1, got {value}")
        if embed_dim % num_heads:
            raise ValueError(
                f"model.embed_dim={embed_dim} must be a multiple of model.num_heads={num_heads}"
            )
        if norm not in NORMS:
            raise ValueError(f"model.norm must be one of {NORMS}, got {norm!r}")
        if not logit_clip > 0:
            raise ValueError(f"model.logit_clip must be > 0, got {logit_clip}")
        for field, mode in (("val_inference", val_inference), ("test_inference", test_inference)):
            if mode not in INFERENCE_MODES:
                raise ValueError(f"model.{field} must be one of {INFERENCE_MODES}, got {mode!r}")
        # The inference modes are evaluation settings, not part of the trained model: kept out of
        # the checkpoint so that `train.py test --ckpt_path ... --model.test_inference greedy`
        # is honoured (LightningCLI lets checkpoint hyperparameters override the command line).
        self.save_hyperparameters(ignore=["val_inference", "test_inference", "weights"])
        self.policy = POMOPolicy(embed_dim, num_layers, num_heads, ff_dim, norm, logit_clip)
        if weights is not None:
            load_teacher_weights(self, weights)
        self.num_starts = num_starts
        self.inference = {"val": val_inference, "test": test_inference}
        self.metrics = nn.ModuleDict(
            {
                f"{split}_{name}": MeanMetric(nan_strategy="ignore")
                for split in ("val", "test")
                for name in EVAL_METRICS
            }
        )

    def training_step(self, batch: VRPBatch, batch_idx: int) -> Tensor:
        starts = num_starts_for(batch.num_nodes - 1, self.num_starts)
        rollout = self.policy(batch, starts, "sampling")
        cost = env.cost(rollout.state).to(rollout.log_likelihood.dtype)
        advantage = pomo_advantage(cost, starts)
        loss = -(advantage * rollout.log_likelihood).mean()
        size = batch.batch_size
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=size)
        self.log("train/cost", cost.mean(), on_step=True, on_epoch=True, batch_size=size)
        return loss

    def validated_costs(self, instances: VRPBatch, solutions: Tensor) -> tuple[Tensor, Tensor]:
        """Validator costs [B] (NaN where infeasible) and feasibility [B] bool of `solutions`."""
        cpu = instances.to("cpu")
        sequences = solutions.cpu().numpy()
        costs = np.full(instances.batch_size, np.nan)
        for row in range(instances.batch_size):
            try:
                costs[row] = validate(cpu.index(row), sequences[row], name=f"instance {row}")
            except InfeasibleSolution as error:
                warnings.warn(f"POMOTeacher: infeasible solution: {error}", stacklevel=2)
        cost = torch.from_numpy(costs).to(solutions.device)
        return cost, cost.isfinite()

    def _evaluate(self, batch: VRPEvalBatch, split: str) -> dict[str, object]:
        instances = batch.instances
        solutions, _ = solve(self.policy, instances, self.inference[split], self.num_starts)
        cost, feasible = self.validated_costs(instances, solutions)
        gap = 100.0 * (cost - batch.reference_cost) / batch.reference_cost
        values = {"cost": cost, "gap": gap, "feasible": feasible.double()}
        for name, value in values.items():
            self.metrics[f"{split}_{name}"].update(value)
            known = value[value.isfinite()]
            self.log(
                f"{split}/{batch.name}/{name}",
                known.mean() if known.numel() else torch.tensor(float("nan")),
                batch_size=max(known.numel(), 1),
                add_dataloader_idx=False,
                sync_dist=True,
            )
        return {"instances": instances, "solutions": solutions, "costs": cost, "name": batch.name}

    def _log_totals(self, split: str) -> None:
        for name in EVAL_METRICS:
            metric = self.metrics[f"{split}_{name}"]
            if metric.update_called:
                self.log(f"{split}/{name}", metric.compute(), prog_bar=name == "gap")
            metric.reset()

    def validation_step(
        self, batch: VRPEvalBatch, batch_idx: int, dataloader_idx: int = 0
    ) -> dict[str, object]:
        return self._evaluate(batch, "val")

    def test_step(
        self, batch: VRPEvalBatch, batch_idx: int, dataloader_idx: int = 0
    ) -> dict[str, object]:
        return self._evaluate(batch, "test")

    def on_validation_epoch_end(self) -> None:
        self._log_totals("val")

    def on_test_epoch_end(self) -> None:
        self._log_totals("test")
