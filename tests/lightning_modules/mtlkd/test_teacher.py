"""POMO teacher: shapes, legal actions, log-likelihoods, POMO baseline, learning, inference."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules import POMOTeacher
from optiforge.lightning_modules.mtlkd import POMOPolicy, pomo_advantage
from optiforge.lightning_modules.mtlkd.teacher_inference import num_starts_for, solve
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import SEEN_VARIANTS

TINY = {"embed_dim": 16, "num_layers": 2, "num_heads": 4, "ff_dim": 32}


def tiny_policy(seed: int = 0, norm: str = "instance", device: str = "cpu") -> POMOPolicy:
    """An untrained small teacher policy (seeded) on `device`."""
    torch.manual_seed(seed)
    return POMOPolicy(**TINY, norm=norm).to(device)  # type: ignore[arg-type]


def seen_batch(num_customers: int = 6, per_variant: int = 2, device: str = "cpu") -> VRPBatch:
    """`per_variant` instances of each of the 6 seen variants in one batch, on `device`."""
    return generate(list(SEEN_VARIANTS), num_customers, 6 * per_variant, seed=3, device=device)


@pytest.mark.parametrize("norm", ["instance", "rms"])
def test_shapes(norm: str) -> None:
    """Embeddings [B, N, d]; a rollout gives actions [S B, T], log-likelihoods [S B] <= 0 and
    step distributions [S B, N] that sum to 1."""
    policy, batch = tiny_policy(norm=norm), seen_batch()
    assert policy.encode(batch).shape == (12, 7, 16)
    rollout = policy(batch, num_starts=3)
    assert rollout.actions.shape[0] == 36 and rollout.log_likelihood.shape == (36,)
    assert bool((rollout.log_likelihood <= 0).all()) and bool(env.done(rollout.state).all())
    state = env.reset(batch, 3)
    log_p = policy.step(policy.precompute(batch), state, env.action_mask(state))
    assert log_p.shape == (36, 7)
    assert torch.allclose(log_p.exp().sum(-1), torch.ones(36))


def test_actions_are_legal_and_solutions_validate(device: str) -> None:
    """Replaying sampled actions, every one is allowed by the env's mask at its step, and the
    solutions of all rows pass the validator at the env's cost (sampled rollouts on each device)."""
    policy, batch = tiny_policy(device=device), seen_batch(device=device)
    rollout = policy(batch, num_starts=4)
    state = env.reset(batch, 4)
    for action in rollout.actions.T:
        assert bool(env.action_mask(state).gather(1, action[:, None]).all())
        state = env.step(state, action)
    instance_rows = batch.index(state.instance)
    costs = validate_batch(instance_rows, env.solution(rollout.state))
    np.testing.assert_allclose(costs, env.cost(rollout.state).cpu().numpy(), atol=1e-5)


def test_log_likelihood_matches_a_per_row_re_evaluation() -> None:
    """The batched rollout's log-likelihood of every row equals the sum of log pi recomputed
    for that row alone (one instance, one start), and teacher forcing reproduces it."""
    policy, batch = tiny_policy(), seen_batch(per_variant=1)
    starts = 3
    rollout = policy(batch, num_starts=starts)
    forced = policy(batch, num_starts=starts, actions=rollout.actions)
    assert torch.allclose(forced.log_likelihood, rollout.log_likelihood, atol=1e-5)
    with torch.no_grad():
        for row in range(starts * batch.batch_size):
            start, b = divmod(row, batch.batch_size)
            one = batch.index(b)
            cache = policy.precompute(one)
            state = env.step(env.reset(one), torch.tensor([start + 1]))
            total = 0.0
            for action in rollout.actions[row]:
                total += float(policy.step(cache, state, env.action_mask(state))[0, action])
                state = env.step(state, action[None])
            assert total == pytest.approx(float(rollout.log_likelihood[row]), abs=1e-4)


def complete_trajectories(batch: VRPBatch) -> list[list[int]]:
    """Every complete action sequence of a one-instance batch from the depot (env masks)."""
    finished, frontier = [], [[]]
    while frontier:
        actions = frontier.pop()
        state = env.reset(batch)
        for action in actions:
            state = env.step(state, torch.tensor([action]))
        if bool(env.done(state).all()):
            finished.append(actions)
            continue
        legal = env.action_mask(state)[0].nonzero().flatten().tolist()
        frontier += [[*actions, node] for node in legal]
    return finished


def test_trajectory_probabilities_sum_to_one() -> None:
    """On a 3-customer VRPTW instance the teacher-forced probabilities of all complete
    trajectories (padded with idle depot moves, probability 1) sum to 1."""
    batch = generate("VRPTW", 3, 1, seed=5)
    trajectories = complete_trajectories(batch)
    length = max(len(t) for t in trajectories)
    actions = torch.tensor([t + [0] * (length - len(t)) for t in trajectories])
    copies = batch.index(torch.zeros(len(trajectories), dtype=torch.long))
    with torch.no_grad():
        forced = tiny_policy()(copies, num_starts=1, actions=actions)
    assert len(trajectories) > 3
    assert float(forced.log_likelihood.exp().sum()) == pytest.approx(1.0, abs=1e-5)


def test_illegal_forced_action_raises() -> None:
    """Teacher forcing a masked action (the depot at the start) names the row and step."""
    batch = generate("CVRP", 4, 2, seed=0)
    with pytest.raises(ValueError, match=r"actions\[0, 0\] = 0 is illegal"):
        tiny_policy()(batch, num_starts=1, actions=torch.zeros(2, 8, dtype=torch.long))


def test_pomo_advantage_has_zero_mean_per_instance() -> None:
    """A = mean over the starts of an instance minus the cost: zero mean per instance, positive
    for the cheaper-than-average starts, in the env's row layout s * B + b."""
    cost = torch.rand(5 * 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    advantage = pomo_advantage(cost, num_starts=5).view(5, 3)
    assert torch.allclose(advantage.mean(0), torch.zeros(3, dtype=torch.float64), atol=1e-12)
    per_start = cost.view(5, 3)
    assert torch.equal(advantage > 0, per_start < per_start.mean(0))


class AdamTeacher(POMOTeacher):
    """The teacher with a fixed optimizer and a batch transfer, for a Trainer without a config
    or `VRPDataModule`."""

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=3e-3)

    def transfer_batch_to_device(
        self, batch: VRPBatch, device: torch.device, dataloader_idx: int
    ) -> VRPBatch:
        return batch.to(device)


@pytest.mark.filterwarnings("ignore:You defined a `validation_step` but have no `val_dataloader`")
def test_reinforce_steps_reduce_the_mean_cost() -> None:
    """40 REINFORCE steps on 16 fixed CVRP10 instances cut their mean greedy multi-start cost
    by more than 10 % (seeded; measured: to 0.76 of the initial cost)."""
    L.seed_everything(0)
    teacher = AdamTeacher(**TINY)
    batch = generate("CVRP", 10, 16, seed=1)
    before = solve(teacher.policy, batch, "multistart")[1].mean()
    trainer = L.Trainer(
        max_steps=40,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
    )
    trainer.fit(teacher, DataLoader([batch] * 40, batch_size=None))
    after = solve(teacher.policy, batch, "multistart")[1].mean()
    assert float(after) < 0.9 * float(before)


def test_inference_modes_are_ordered_and_validate(device: str) -> None:
    """Per instance augment <= multistart <= greedy (each contains the previous), and every
    returned solution validates at the env's cost, on each device."""
    policy, batch = tiny_policy(device=device), seen_batch(num_customers=8, device=device)
    costs = {}
    for mode in ("greedy", "multistart", "augment"):
        solutions, costs[mode] = solve(policy, batch, mode)  # type: ignore[arg-type]
        validated = validate_batch(batch, solutions)
        np.testing.assert_allclose(validated, costs[mode].cpu().numpy(), atol=1e-5)
    assert bool((costs["multistart"] <= costs["greedy"] + 1e-6).all())
    assert bool((costs["augment"] <= costs["multistart"] + 1e-6).all())
    assert bool((costs["augment"] < costs["greedy"]).any())


def small_data(tmp_path: Path) -> VRPDataModule:
    return VRPDataModule(
        train_variants=["CVRP", "VRPTW"],
        num_customers=6,
        batch_size=4,
        batches_per_epoch=1,
        val_instances=3,
        test_instances=3,
        eval_batch_size=2,
        cache_dir=str(tmp_path / "cache"),
        reference_iterations=50,
    )


def merged(results: list[dict[str, float]]) -> dict[str, float]:
    """One dict from the per-dataloader result dicts of `Trainer.validate` / `test`."""
    return {key: value for per_loader in results for key, value in per_loader.items()}


def test_validation_and_test_log_validated_costs_and_gaps(tmp_path: Path) -> None:
    """validate/test log per-set and overall cost, gap and feasibility (1.0); the overall cost
    is the mean validator cost, and no solution beats the PyVRP reference by more than noise."""
    data = small_data(tmp_path)
    teacher = POMOTeacher(**TINY, val_inference="greedy", test_inference="augment")
    trainer = L.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False)
    val = merged(trainer.validate(teacher, datamodule=data))
    assert val["val/feasible"] == 1.0
    assert {"val/CVRP/n6/gap", "val/VRPTW/n6/cost", "val/cost"} <= set(val)
    assert val["val/cost"] == pytest.approx(
        (val["val/CVRP/n6/cost"] + val["val/VRPTW/n6/cost"]) / 2
    )
    test = merged(trainer.test(teacher, datamodule=data))
    assert test["test/feasible"] == 1.0
    assert test["test/gap"] >= -0.01 and test["test/CVRP/n6/gap"] >= -0.01


def test_infeasible_solution_is_not_reported_as_feasible() -> None:
    """A solution that skips a customer gets a NaN cost, feasible False and a warning."""
    batch = generate("CVRP", 3, 2, seed=0)
    solutions = torch.tensor([[0, 1, 2, 3, 0], [0, 1, 2, 0, 0]])
    with pytest.warns(UserWarning, match="POMOTeacher: .*customer 3 visited 0 times"):
        cost = validate_batch(batch, solutions, "warn", "POMOTeacher")
    feasible = np.isfinite(cost)
    assert feasible.tolist() == [True, False] and math.isnan(float(cost[1]))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_starts", 0),
        ("embed_dim", 0),
        ("norm", "layer"),
        ("logit_clip", 0.0),
        ("val_inference", "beam"),
        ("test_inference", "sampling"),
    ],
)
def test_bad_arguments_raise_naming_the_field(field: str, value: object) -> None:
    """Out-of-range or unknown options raise a ValueError naming `model.<field>`."""
    with pytest.raises(ValueError, match=f"model.{field}"):
        POMOTeacher(**{**TINY, field: value})  # type: ignore[arg-type]


def test_inference_modes_stay_out_of_the_checkpoint_hyperparameters() -> None:
    """The model's hyperparameters are saved, the evaluation modes are not (so `train.py test
    --ckpt_path` with `--model.test_inference` is not overridden by the checkpoint)."""
    teacher = POMOTeacher(**TINY, test_inference="greedy")
    assert teacher.hparams["embed_dim"] == 16 and teacher.hparams["num_starts"] is None
    assert "test_inference" not in teacher.hparams and "val_inference" not in teacher.hparams
    assert teacher.inference == {"val": "multistart", "test": "greedy"}


def test_embed_dim_must_divide_into_heads() -> None:
    """embed_dim not a multiple of num_heads is rejected."""
    with pytest.raises(ValueError, match="multiple of model.num_heads"):
        POMOTeacher(embed_dim=18, num_heads=4)


@pytest.mark.filterwarnings("ignore:You are trying to `self.log\\(\\)`")
def test_num_starts_caps_the_starts() -> None:
    """num_starts None means n starts, an int at most that many; training runs with 3 of 6."""
    assert (num_starts_for(6, None), num_starts_for(6, 3), num_starts_for(2, 3)) == (6, 3, 2)
    teacher = POMOTeacher(**TINY, num_starts=3)
    assert teacher.num_starts == 3
    loss = teacher.training_step(generate("CVRP", 6, 2, seed=0), 0)
    assert bool(torch.isfinite(loss))
