"""POMO teacher: REINFORCE with the shared multi-start baseline (Kwon et al. 2020).

For instance b with S sampled rollouts tau^1..tau^S (start s forced to customer s + 1),
reward R(tau) = -cost(tau) from the env, and the shared baseline is the mean over the starts:
    A^s = R(tau^s) - (1/S) sum_s' R(tau^s')          (= mean_s' cost - cost^s; zero mean per b)
    loss = -(1 / (S B)) sum_{b,s} A^s log pi(tau^s)   (A detached)
Evaluation decodes with `teacher_inference.solve` through `vrp_evaluation.VRPEvaluationModule`,
which validates every reported solution and logs cost, gap, feasibility and time per instance.
"""

from __future__ import annotations

from torch import Tensor

from optiforge.lightning_modules.mtlkd.attention_encoder import NORMS, Norm
from optiforge.lightning_modules.mtlkd.features import FeatureScaling, check_scaling
from optiforge.lightning_modules.mtlkd.policy_weights import load_weights
from optiforge.lightning_modules.mtlkd.teacher_inference import (
    INFERENCE_MODES,
    InferenceMode,
    num_starts_for,
    solve,
)
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule
from optiforge.problems.vrp import env
from optiforge.problems.vrp.instance import VRPBatch


def pomo_advantage(cost: Tensor, num_starts: int) -> Tensor:
    """A [R] for costs [R] in the env's row layout r = s * B + b: -(cost - mean_s cost)."""
    per_start = cost.view(num_starts, -1)
    return (per_start.mean(0, keepdim=True) - per_start).reshape(-1)


class POMOTeacher(VRPEvaluationModule):
    """Single-task POMO teacher of MTL-KD (heavy encoder, light decoder), trained by REINFORCE.

    Logs `train/loss`, `train/cost` (mean sampled env cost) and the evaluation metrics of
    `VRPEvaluationModule`. It defines no `configure_optimizers`: the optimizer comes from the
    config, as for the classifier. Trained on a list of variants (mixed batches) it is the
    MTPOMO-style multi-task light-decoder baseline of MTL-KD.

    Args:
        embed_dim: embedding size d.
        num_layers: encoder layers.
        num_heads: attention heads (encoder and decoder glimpse).
        ff_dim: encoder feed-forward hidden size.
        norm: encoder normalisation, "instance" (POMO) or "rms" (RMSNorm).
        logit_clip: C of the tanh-clipped pointer logits.
        feature_scaling: "raw" (times and lengths in instance units, the shipped weights) or
            "instance" (divided by the instance's horizon and distance limit, so another
            time-window convention stays in distribution); see `features.py`.
        num_starts: POMO starts per instance in training and multi-start inference: n (all
            customers) when None, otherwise at most this many (n starts are many at n = 1000).
        val_inference: "greedy", "multistart" or "augment" (multi-start x 8 symmetries).
        test_inference: the same choice for `test`.
        weights: a weights-only file written by `policy_weights.save_weights` (e.g. the
            shipped `weights/mtlkd/teacher_cvrp_n50.pt`, see `policy_weights.resolve_weights`)
            to start from; its architecture and feature layout must equal this model's. Not
            stored in the hyperparameters.
    """

    def __init__(
        self,
        embed_dim: int = 128,
        num_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        norm: Norm = "instance",
        logit_clip: float = 10.0,
        feature_scaling: FeatureScaling = "raw",
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
        check_scaling(feature_scaling, "model.feature_scaling")
        for field, mode in (("val_inference", val_inference), ("test_inference", test_inference)):
            if mode not in INFERENCE_MODES:
                raise ValueError(f"model.{field} must be one of {INFERENCE_MODES}, got {mode!r}")
        # The inference modes are evaluation settings, not part of the trained model: kept out of
        # the checkpoint so that `train.py test --ckpt_path ... --model.test_inference greedy`
        # is honoured (LightningCLI lets checkpoint hyperparameters override the command line).
        self.save_hyperparameters(ignore=["val_inference", "test_inference", "weights"])
        self.policy = POMOPolicy(
            embed_dim, num_layers, num_heads, ff_dim, norm, logit_clip, feature_scaling
        )
        if weights is not None:
            load_weights(self, weights)
        self.num_starts = num_starts
        self.inference = {"val": val_inference, "test": test_inference}

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

    def solve(self, instances: VRPBatch, mode: InferenceMode) -> Tensor:
        return solve(self.policy, instances, mode, self.num_starts)[0]
