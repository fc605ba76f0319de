"""The MTL-KD student's KD step: equal to the per-task, per-step computation it replaced, one
student encoding and decoder call per batch, and grouped decoding equal to one call."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor

from optiforge.lightning_modules import MTLKDStudent
from optiforge.lightning_modules.mtlkd import student_policy
from optiforge.lightning_modules.mtlkd.distillation import distillation_kl
from optiforge.lightning_modules.mtlkd.rollout import sample
from optiforge.lightning_modules.mtlkd.student_policy import DecoderRows
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.variants import ALL_VARIANTS
from tests.lightning_modules.mtlkd.test_student import tiny_student


def replayed_distill(
    module: MTLKDStudent, batch: VRPBatch, teacher: POMOPolicy
) -> tuple[Tensor, Tensor]:
    """One task's KL sum and count as `distill` computed it before it reused its rollout and
    decoded every step in one call: the trajectory rolled out by `forward`, the window's start
    state rebuilt by replaying the prefix in the env, then at each window step a fresh mask, a
    student step on this task's own encoding and a teacher step on a second encoding."""
    with torch.no_grad():
        driver = teacher if module.trajectory == "teacher" else module.policy
        actions = driver(batch, 1, "sampling").actions
    steps = actions.shape[1]
    width = steps if module.window is None else min(module.window, steps)
    first = int(torch.randint(0, steps - width + 1, ()))
    state = env.reset(batch, 1, prefix=actions[:, :first] if first else None)
    student_cache = module.policy.precompute(batch)
    with torch.no_grad():
        teacher_cache = teacher.precompute(batch)
    total, count = torch.zeros(()), torch.zeros(())
    for t in range(first, first + width):
        active = ~env.done(state)
        mask = env.action_mask(state)
        student = module.policy.step(student_cache, state, mask)
        with torch.no_grad():
            target = teacher.step(teacher_cache, state, mask)
        kl = distillation_kl(student, target, mask, module.temperature, module.kd_direction)
        total, count = total + (kl * active).sum(), count + active.sum()
        state = env.step(state, actions[:, t])
    return total, count


def replayed_loss(module: MTLKDStudent, batch: VRPBatch) -> Tensor:
    """The KD loss of a mixed batch, task by task (in variant order) through `replayed_distill`:
    summed KL over every task's unfinished window steps over their number."""
    tasks = batch.variant_index()
    total, count = torch.zeros(()), torch.zeros(())
    for code in tasks.unique().tolist():
        name = list(ALL_VARIANTS)[code]
        part = batch.index((tasks == code).nonzero().squeeze(1))
        task_total, task_count = replayed_distill(module, part, module.teachers[name])
        total, count = total + task_total, count + task_count
    return total / count


@pytest.mark.parametrize(
    ("trajectory", "window", "variants"),
    [
        ("teacher", 6, ["OVRPTW"]),
        ("teacher", None, ["OVRPTW"]),
        ("student", 6, ["OVRPTW"]),
        ("teacher", 5, ["CVRP", "VRPTW", "OVRP"]),
        ("student", 4, ["VRPB", "VRPL"]),
    ],
)
def test_training_step_equals_the_replayed_computation(
    trajectory: str, window: int | None, variants: list[str]
) -> None:
    """The training loss (every window step of every task in one decoder call on one encoding
    of the batch) and every student gradient equal the replayed per-task, per-step computation
    (prefix replay, masks and encodings recomputed) on a fixed seeded batch, to 1e-6."""
    batch = generate(variants, 10, 4 * len(variants), seed=7)
    results = []
    for compute in ("training_step", "replayed"):
        module = tiny_student(trajectory=trajectory, window=window)
        torch.manual_seed(11)
        if compute == "training_step":
            loss = module.training_step(batch, 0)
        else:
            loss = replayed_loss(module, batch)
        loss.backward()
        grads = [p.grad.clone() for p in module.policy.parameters() if p.grad is not None]
        results.append((loss.detach(), grads))
    (loss, grads), (expected_loss, expected_grads) = results
    assert len(grads) == len(expected_grads) > 0 and expected_loss > 0
    assert torch.allclose(loss, expected_loss, rtol=1e-6, atol=1e-6)
    for grad, expected in zip(grads, expected_grads, strict=True):
        assert torch.allclose(grad, expected, rtol=1e-6, atol=1e-6)


def test_kd_step_encodes_and_decodes_the_student_once_and_masks_each_state_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One KD step of a 2-task batch: each teacher encodes once, the student encodes the batch
    once and decodes every window step of both tasks in one call, the env's mask is computed
    once per rollout step (window included: it reuses the rollout's), the env steps once per
    action and never replays a prefix."""
    module = tiny_student(window=5)
    calls = {"precompute": 0, "action_mask": 0, "step": 0, "encode": 0, "scores": 0}

    def counted(name: str, function):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(POMOPolicy, "precompute", counted("precompute", POMOPolicy.precompute))
    monkeypatch.setattr(env, "action_mask", counted("action_mask", env.action_mask))
    monkeypatch.setattr(env, "step", counted("step", env.step))
    for name in ("encode", "scores"):
        monkeypatch.setattr(module.policy, name, counted(name, getattr(module.policy, name)))
    batch = generate(["CVRP", "VRPTW"], 8, 4, seed=2)
    rollouts = []
    original = module.task_window

    def task_window(*args):  # type: ignore[no-untyped-def]
        before = calls["step"]
        result = original(*args)
        rollouts.append(calls["step"] - before)
        return result

    module.task_window = task_window  # type: ignore[method-assign]
    torch.manual_seed(3)
    module.training_step(batch, 0)
    assert calls["precompute"] == len(rollouts) == 2 and calls["encode"] == calls["scores"] == 1
    assert calls["action_mask"] == calls["step"] == sum(rollouts) > 2 * 5


def test_grouped_decoding_equals_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of many token counts decoded in groups of 3 (sorted by count, each padded to its
    own longest row) give the log-probabilities of one call that pads every row to the longest,
    in the rows' own order."""
    module = tiny_student()
    policy = module.policy
    batch = generate(["CVRP", "VRPTW"], 12, 4, seed=5)
    h = policy.precompute(batch)
    parts, masks, state = [], [], env.reset(batch)
    for _ in range(9):
        mask = env.action_mask(state)
        parts.append(policy.rows(state, mask))
        masks.append(mask)
        state = env.step(state, sample(policy.step(h, state, mask)))
    rows, mask = DecoderRows.cat(parts), torch.cat(masks)
    assert len(set(rows.remaining.sum(1).tolist())) > 3
    expected = policy.decode_rows(h, rows, mask)
    monkeypatch.setattr(student_policy, "ROWS_PER_CALL", 3)
    torch.testing.assert_close(policy.scores(h, rows, mask), expected, atol=1e-5, rtol=0)
