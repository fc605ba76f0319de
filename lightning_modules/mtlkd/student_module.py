"""MTL-KD student: a heavy-decoder policy distilled, label-free, from frozen single-task teachers.

Training (per mixed batch of the seen tasks): every instance is routed to the teacher of its
variant (from the attributes it actually uses, `VRPBatch.variant_index`). A trajectory is
rolled out without gradients, by default by sampling from that teacher, recording each step's
state, mask and log-probabilities; a window of `window` consecutive decoding steps starting at a
random step is then distilled: at each step of the window the student scores the *same*
`VRPState` object, with the same mask, as the teacher did (for teacher trajectories the
teacher's recorded distribution is the target), and the two next-node distributions are
compared by `distillation.distillation_kl` (per-step KL, forward by default, temperature tau).
Loss = mean KL over the window's unfinished (instance, step) pairs.

Why these defaults: forward KL is Hinton's KD and covers all of the teacher's good moves
(reverse KL would let the student drop them); tau = 1 keeps the teacher's own confidence;
teacher-sampled trajectories cost one light-decoder rollout and visit the states the teacher
is good at, whereas student trajectories (`trajectory="student"`, on-policy distillation,
which fights exposure bias) cost a full heavy-decoder rollout per batch; a window of steps
instead of the whole trajectory is LEHD's trick (it trains on random partial solutions) and
makes a batch cost O(window) heavy-decoder steps, which is what makes CPU training feasible.
The student encodes the whole mixed batch once and decodes the rows of every window step of
every task in one `HeavyDecoderPolicy.scores` call (grouped by token count), instead of one small
decoder call per step and task.

Teachers are policies read from their weights files when the student is built (from `teachers`,
default the shipped n = 50 weights of the 6 seen variants), so a missing file, a file that is
not a teacher, or a teacher trained on another variant stops a run before anything is written;
they are not part of the student's checkpoint. Checkpoints
record the input feature layout; evaluating one trained with another layout is refused.
Evaluation: greedy, multi-start or multi-start x 8 augmentation, optionally followed by
`r3c_iterations` rounds of R3C, through `VRPEvaluationModule` (validator-checked).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

import torch
from torch import Tensor

from optiforge.lightning_modules.mtlkd.candidate_restriction import check_candidates
from optiforge.lightning_modules.mtlkd.distillation import DIRECTIONS, Direction, distillation_kl
from optiforge.lightning_modules.mtlkd.features import FeatureScaling, check_scaling
from optiforge.lightning_modules.mtlkd.policy_weights import (
    FEATURE_LAYOUT,
    load_weights,
    model_name,
    policy_of,
    read_weights,
    shipped_teacher_path,
)
from optiforge.lightning_modules.mtlkd.r3c import r3c
from optiforge.lightning_modules.mtlkd.rollout import DecodingStep, recorded, roll_out
from optiforge.lightning_modules.mtlkd.student_policy import DecoderRows, HeavyDecoderPolicy
from optiforge.lightning_modules.mtlkd.teacher_inference import (
    INFERENCE_MODES,
    InferenceMode,
    solve,
)
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule
from optiforge.problems.vrp import env
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS, variant

Trajectory = Literal["teacher", "student"]
TRAJECTORIES: tuple[str, ...] = ("teacher", "student")


@dataclass(frozen=True)
class Window:
    """One task's distilled steps, their rows stacked: what the student decodes (`rows`, the
    instances indexing the whole batch's embeddings), the legal masks and the teacher's
    log-probabilities [S, N], which rows are unfinished [S], and the task's instance count."""

    rows: DecoderRows
    mask: Tensor
    target: Tensor
    active: Tensor
    instances: int


def load_teacher(name: str, path: str) -> POMOPolicy:
    """The frozen teacher policy of variant `name` from `path`; a file that is missing, not a
    teacher, or a teacher of other variants raises naming `model.teachers`."""
    field = f"model.teachers[{name}]"
    variant(name)  # an unknown variant name raises, listing the 16
    weights = read_weights(path, field)
    if model_name(weights) != "POMOTeacher":
        raise ValueError(f"{field}: {path} holds a {model_name(weights)}, not a POMOTeacher")
    variants = weights.metadata.get("variants")
    if variants is not None and variants != [name]:
        raise ValueError(f"{field}: {path} is a teacher of {variants}, not of {name}")
    policy = policy_of(weights, field)
    policy.requires_grad_(False)
    return policy


class MTLKDStudent(VRPEvaluationModule):
    """Heavy-decoder multi-task student trained by per-step policy distillation.

    Args:
        embed_dim, encoder_layers, decoder_layers, num_heads, ff_dim: `HeavyDecoderPolicy`.
        feature_scaling: the student's features, "raw" (instance units, the shipped weights)
            or "instance" (times / horizon, lengths / limit; `features.py`). Each teacher keeps
            the scaling its weights file records, which may differ.
        teachers: variant name -> teacher weights file (a POMOTeacher's, trained on that
            variant when the file records it); None = the shipped n = 50 RouteFinder-convention
            teachers (`teacher_<variant>_n50.pt`, raw features, matching this class's defaults
            and the datamodule's default convention) of the 6 seen variants; the MTL-KD configs
            name the mvmoe ones. A training instance whose variant has no teacher raises.
        kd_direction: "forward" (KL(teacher || student), default) or "reverse".
        temperature: tau > 0 of the distillation.
        trajectory: who rolls out the distilled states: "teacher" (sampled) or "student".
        window: decoding steps distilled per batch (from a random start); None = all.
        num_starts: starts of multi-start inference (None = n).
        val_inference, test_inference: "greedy", "multistart" or "augment".
        r3c_iterations: R3C rounds after the inference mode (0 = none).
        r3c_segment: (min, max) customers cut per R3C round.
        r3c_seed: seed of R3C's random reorderings and cuts (evaluation is reproducible).
        candidate_k: at inference on instances of >= `candidate_min_nodes` customers, each
            decoding step sees only the depot and the k nearest unvisited customers (large n at
            a usable cost, `candidate_restriction`); None = every remaining node. Training
            (n = 50) is unaffected below the threshold.
        candidate_min_nodes: size threshold of `candidate_k`.
        weights: a weights-only student file (`policy_weights`, e.g. the shipped
            `weights/mtlkd/student_n50.pt`) to start from; its architecture and feature layout
            must match.
    """

    def __init__(
        self,
        embed_dim: int = 128,
        encoder_layers: int = 1,
        decoder_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        feature_scaling: FeatureScaling = "raw",
        teachers: dict[str, str] | None = None,
        kd_direction: Direction = "forward",
        temperature: float = 1.0,
        trajectory: Trajectory = "teacher",
        window: int | None = 16,
        num_starts: int | None = None,
        val_inference: InferenceMode = "greedy",
        test_inference: InferenceMode = "augment",
        r3c_iterations: int = 0,
        r3c_segment: tuple[int, int] = (4, 20),
        r3c_seed: int = 0,
        candidate_k: int | None = None,
        candidate_min_nodes: int = 200,
        weights: str | None = None,
    ) -> None:
        super().__init__()
        check_candidates(candidate_k, candidate_min_nodes, "model.")
        if kd_direction not in DIRECTIONS:
            raise ValueError(
                f"model.kd_direction must be one of {DIRECTIONS}, got {kd_direction!r}"
            )
        if not temperature > 0:
            raise ValueError(f"model.temperature must be > 0, got {temperature}")
        check_scaling(feature_scaling, "model.feature_scaling")
        if trajectory not in TRAJECTORIES:
            raise ValueError(f"model.trajectory must be one of {TRAJECTORIES}, got {trajectory!r}")
        for field, mode in (("val_inference", val_inference), ("test_inference", test_inference)):
            if mode not in INFERENCE_MODES:
                raise ValueError(f"model.{field} must be one of {INFERENCE_MODES}, got {mode!r}")
        positive = {
            "window": 1 if window is None else window,
            "num_starts": 1 if num_starts is None else num_starts,
        }
        for field, value in positive.items():
            if value < 1:
                raise ValueError(f"model.{field} must be >= 1 or None, got {value}")
        if r3c_iterations < 0:
            raise ValueError(f"model.r3c_iterations must be >= 0, got {r3c_iterations}")
        if not 1 <= r3c_segment[0] <= r3c_segment[1]:
            raise ValueError(
                f"model.r3c_segment must be (min, max), 1 <= min <= max, got {r3c_segment}"
            )
        # None stays None in the hyperparameters: a checkpoint then means "the shipped teachers
        # of this install", not the absolute paths of the machine it was trained on.
        files = teachers or {
            name: str(shipped_teacher_path(name, convention="routefinder"))
            for name in SEEN_VARIANTS
        }
        teacher_policies = {name: load_teacher(name, path) for name, path in files.items()}
        self.save_hyperparameters(
            ignore=[
                "val_inference",
                "test_inference",
                "r3c_iterations",
                "candidate_k",
                "candidate_min_nodes",
                "weights",
            ]
        )
        self.policy = HeavyDecoderPolicy(
            embed_dim,
            encoder_layers,
            decoder_layers,
            num_heads,
            ff_dim,
            feature_scaling,
            candidate_k,
            candidate_min_nodes,
        )
        self.teacher_files = files
        self.teachers: dict[str, POMOPolicy] = teacher_policies
        self.kd_direction = kd_direction
        self.temperature = temperature
        self.trajectory = trajectory
        self.window = window
        self.num_starts = num_starts
        self.inference = {"val": val_inference, "test": test_inference}
        self.r3c_iterations = r3c_iterations
        self.r3c_segment = (int(r3c_segment[0]), int(r3c_segment[1]))
        self.r3c_seed = r3c_seed
        if weights is not None:
            load_weights(self, weights)

    def on_fit_start(self) -> None:
        for policy in self.teachers.values():
            policy.to(self.device)

    def task_window(self, batch: VRPBatch, rows: Tensor, h: Tensor, teacher: POMOPolicy) -> Window:
        """The distilled window of one task's instances `batch` (rows `rows` of the training
        batch, whose student embeddings are `h`), see the module doc.

        The teacher encodes the instances once and each state's mask is computed once: the
        trajectory's rollout records its states, masks and log-probabilities (`recorded`), and
        the window reuses them (for teacher trajectories the teacher's recorded log pi is the
        target) instead of replaying the prefix in the env and re-running the teacher."""
        with torch.no_grad():
            teacher_cache = teacher.precompute(batch)
        if self.trajectory == "teacher":
            driver = partial(teacher.step, teacher_cache)
        else:
            driver = partial(self.policy.step, h[rows].detach())
        trace: list[DecodingStep] = []
        with torch.no_grad():
            steps = roll_out(recorded(driver, trace), env.reset(batch, 1)).actions.shape[1]
        width = steps if self.window is None else min(self.window, steps)
        first = int(torch.randint(0, steps - width + 1, ()))
        window = trace[first : first + width]
        parts, targets = [], []
        for step in window:
            decoder_rows = self.policy.rows(step.state, step.mask)
            parts.append(replace(decoder_rows, instance=rows[decoder_rows.instance]))
            if self.trajectory == "teacher":
                targets.append(step.log_p)
            else:
                with torch.no_grad():
                    targets.append(teacher.step(teacher_cache, step.state, step.mask))
        return Window(
            DecoderRows.cat(parts),
            torch.cat([step.mask for step in window]),
            torch.cat(targets),
            torch.cat([~env.done(step.state) for step in window]),
            batch.batch_size,
        )

    def training_step(self, batch: VRPBatch, batch_idx: int) -> Tensor:
        """Each task's window from its teacher, then one student decoder call over the rows
        of every window step of every task (one encoding of the whole batch)."""
        names = list(ALL_VARIANTS)
        tasks = batch.variant_index()
        h = self.policy.precompute(batch)
        windows: dict[str, Window] = {}
        for code in tasks.unique().tolist():
            name = names[code]
            if name not in self.teachers:
                raise ValueError(
                    f"training instances of variant {name} have no teacher; teachers: "
                    f"{sorted(self.teachers)} (train on those variants or add a teacher)"
                )
            rows = (tasks == code).nonzero().squeeze(1)
            windows[name] = self.task_window(batch.index(rows), rows, h, self.teachers[name])
        parts = list(windows.values())
        legal = torch.cat([w.mask for w in parts])
        student = self.policy.scores(h, DecoderRows.cat([w.rows for w in parts]), legal)
        target = torch.cat([w.target for w in parts])
        kl = distillation_kl(student, target, legal, self.temperature, self.kd_direction)
        active = torch.cat([w.active for w in parts])
        kl = kl * active
        sizes = [len(w.active) for w in parts]
        for (name, w), task_kl in zip(windows.items(), kl.split(sizes), strict=True):
            count = w.active.sum().clamp(min=1)
            self.log(f"train/kl/{name}", task_kl.sum() / count, batch_size=w.instances)
        loss = kl.sum() / active.sum().clamp(min=1)
        self.log("train/loss", loss, prog_bar=True, batch_size=batch.batch_size)
        return loss

    def solve(
        self, instances: VRPBatch, mode: InferenceMode, r3c_iterations: int | None = None
    ) -> Tensor:
        """`mode`'s solutions, then `r3c_iterations` R3C rounds (None = the module's own)."""
        solutions = solve(self.policy, instances, mode, self.num_starts)[0]
        rounds = self.r3c_iterations if r3c_iterations is None else r3c_iterations
        if rounds:
            generator = torch.Generator().manual_seed(self.r3c_seed)
            segment = self.r3c_segment
            solutions = r3c(self.policy, instances, solutions, rounds, segment, generator)[0]
        return solutions

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["feature_layout"] = dict(FEATURE_LAYOUT)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Refuse a checkpoint whose input features differ from this code's layout."""
        layout = checkpoint.get("feature_layout")
        if layout != FEATURE_LAYOUT:
            raise ValueError(
                f"checkpoint: trained with feature layout {layout}, this code's layout is "
                f"{FEATURE_LAYOUT} (lightning_modules/mtlkd/features.py changed): evaluate it "
                "with the code it was trained with, or retrain"
            )
