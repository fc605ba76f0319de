"""k-nearest candidate restriction of the student: exact when k covers every node, only the
k nearest (legal first) + depot otherwise, feasible rollouts and R3C on all 16 variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.lightning_modules.mtlkd.policy_weights import build_module, save_weights
from optiforge.lightning_modules.mtlkd.r3c import r3c
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS
from tests.devices import DEVICES


def student(k: int | None, min_nodes: int = 0, device: str = "cpu") -> HeavyDecoderPolicy:
    """An untrained small student (seed 0) with the restriction `k`, in eval mode."""
    torch.manual_seed(0)
    policy = HeavyDecoderPolicy(
        16, 1, 2, 4, 32, candidate_k=k, candidate_min_nodes=min_nodes
    )  # fmt: skip
    return policy.eval().to(device)


def random_states(batch: VRPBatch, steps: int, seed: int) -> list[env.VRPState]:
    """The states along `steps` uniform random legal moves (a CPU generator)."""
    generator = torch.Generator().manual_seed(seed)
    state, states = env.reset(batch), []
    for _ in range(steps):
        if bool(env.done(state).all()):
            break
        states.append(state)
        mask = env.action_mask(state)
        noise = torch.rand(mask.shape, generator=generator).to(mask.device)
        state = env.step(state, noise.masked_fill(~mask, -1.0).argmax(1))
    return states


def expected_finite(batch: VRPBatch, state: env.VRPState, row: int, k: int) -> set[int]:
    """Brute force, from the coordinates: the legal actions among the depot and the k unvisited
    customers nearest to the current node, legal customers ranked before illegal ones."""
    locs = batch.locs[row].double().cpu().numpy()
    current = int(state.current[row])
    legal = env.action_mask(state)[row].cpu().numpy()
    visited = state.visited[row].cpu().numpy()
    distance = np.linalg.norm(locs - locs[current], axis=1)
    open_customers = [j for j in range(1, len(locs)) if not visited[j]]
    ranked = sorted(open_customers, key=lambda j: (not legal[j], distance[j]))
    return {j for j in [0, *ranked[:k]] if legal[j]}


@settings(max_examples=12)
@given(
    name=st.sampled_from(list(ALL_VARIANTS)),
    num_customers=st.integers(5, 25),
    seed=st.integers(0, 1000),
)
def test_k_covering_every_customer_gives_exactly_the_unrestricted_log_probabilities(
    name: str, num_customers: int, seed: int
) -> None:
    """With k = n the restricted step equals the unrestricted one bit for bit at every state of
    a random rollout."""
    batch = generate(name, num_customers, 4, seed=seed)
    full, restricted = student(None), student(num_customers)
    with torch.no_grad():
        h = full.encode(batch)
        for state in random_states(batch, 2 * num_customers, seed):
            mask = env.action_mask(state)
            assert torch.equal(restricted.step(h, state, mask), full.step(h, state, mask))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=12)
@given(
    name=st.sampled_from(list(ALL_VARIANTS)),
    k=st.integers(1, 6),
    seed=st.integers(0, 1000),
)
def test_small_k_leaves_only_the_nearest_unvisited_and_the_depot(
    name: str, k: int, seed: int, device: str
) -> None:
    """Finite probability exactly on the legal ones of: depot + the k nearest unvisited
    customers (legal first), checked against a brute force over the coordinates."""
    batch = generate(name, 20, 3, seed=seed, device=device)
    policy = student(k, device=device)
    with torch.no_grad():
        h = policy.encode(batch)
        for state in random_states(batch, 25, seed):
            log_p = policy.step(h, state, env.action_mask(state))
            for row in range(batch.batch_size):
                finite = set(torch.isfinite(log_p[row]).nonzero().flatten().tolist())
                assert finite == expected_finite(batch, state, row, k)
                assert float(log_p[row].exp().sum()) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("name", list(ALL_VARIANTS))
def test_restricted_greedy_and_r3c_are_feasible_on_every_variant(name: str, device: str) -> None:
    """k = 2 greedy rollouts and 4 R3C rounds pass the validator at the env's cost (each
    device), and R3C never worsens them."""
    batch = generate(name, 30, 6, seed=7, device=device)
    policy = student(2, device=device)
    with torch.no_grad():
        rollout = policy(batch, 1, "greedy")
        greedy = validate_batch(batch, env.solution(rollout.state))
        np.testing.assert_allclose(greedy, env.cost(rollout.state).cpu().numpy(), atol=1e-5)
        start = env.solution(rollout.state)
        improved, cost, _ = r3c(policy, batch, start, 4, (2, 8), torch.Generator().manual_seed(0))
    after = validate_batch(batch, improved)
    np.testing.assert_allclose(after, cost.cpu().numpy(), atol=1e-6)
    assert (after <= greedy + 1e-9).all()


def test_teacher_forced_actions_outside_the_candidates_stay_legal(device: str) -> None:
    """With k = 1, forcing a random legal rollout gives a finite log-likelihood equal to the
    sum of the forced actions' log-probabilities (each recomputed with that action included)."""
    batch = generate("CVRP", 15, 4, seed=3, device=device)
    policy = student(1, device=device)
    generator = torch.Generator().manual_seed(0)
    actions = torch.stack(env.random_feasible_rollout(batch, generator).actions, 1)
    with torch.no_grad():
        rollout = policy(batch, 1, actions=actions)
        h, state, total = policy.encode(batch), env.reset(batch), torch.zeros(4, device=device)
        for t in range(actions.shape[1]):
            log_p = policy.step(h, state, env.action_mask(state), actions[:, t])
            total = total + log_p.gather(1, actions[:, t : t + 1]).squeeze(1)
            state = env.step(state, actions[:, t])
    assert bool(torch.isfinite(rollout.log_likelihood).all())
    torch.testing.assert_close(rollout.log_likelihood, total)


def test_restriction_is_off_below_the_size_threshold() -> None:
    """n = 20 with candidate_min_nodes = 21 decodes as the unrestricted student; with 20 the
    restriction (k = 1) applies."""
    batch = generate("CVRP", 20, 4, seed=0)
    with torch.no_grad():
        full = student(None)(batch, 1, "greedy").log_likelihood
        off = student(1, min_nodes=21)(batch, 1, "greedy").log_likelihood
        on = student(1, min_nodes=20)(batch, 1, "greedy").log_likelihood
    assert torch.equal(off, full)
    assert not torch.equal(on, full)


@pytest.mark.parametrize(
    ("settings_", "message"),
    [({"candidate_k": 0}, "candidate_k must be >= 1 or None"),
     ({"candidate_min_nodes": -1}, "candidate_min_nodes must be >= 0")],
)  # fmt: skip
def test_bad_candidate_settings_fail_by_name(settings_: dict[str, int], message: str) -> None:
    """k < 1 and a negative size threshold are refused, naming the field."""
    with pytest.raises(ValueError, match=message):
        HeavyDecoderPolicy(16, 1, 2, 4, 32, **settings_)


def test_student_module_setting_reaches_decoding_and_stays_out_of_the_weights(
    tmp_path: Path,
) -> None:
    """MTLKDStudent(candidate_k=1, candidate_min_nodes=20) decodes n = 20 exactly as the
    restricted policy with the same weights; its weights file rebuilds unrestricted (an
    inference setting, not part of the model), and `build_module(..., candidate_k=1)` restores
    it. Bad values name model.candidate_k / model.candidate_min_nodes."""
    batch = generate("CVRP", 20, 4, seed=1)
    torch.manual_seed(0)
    module = MTLKDStudent(16, 1, 2, 4, 32, candidate_k=1, candidate_min_nodes=20).eval()
    save_weights(module, tmp_path / "student.pt")
    with torch.no_grad():
        restricted = module.policy(batch, 1, "greedy").log_likelihood
        rebuilt = build_module(tmp_path / "student.pt").policy(batch, 1, "greedy").log_likelihood
        again = build_module(tmp_path / "student.pt", candidate_k=1, candidate_min_nodes=20)
        again_restricted = again.policy(batch, 1, "greedy").log_likelihood
        full = student(None)(batch, 1, "greedy").log_likelihood
    assert torch.equal(restricted, student(1, min_nodes=20)(batch, 1, "greedy").log_likelihood)
    assert torch.equal(again_restricted, restricted)
    assert torch.equal(rebuilt, full)
    assert not torch.equal(restricted, full)
    for field, value in (("candidate_k", 0), ("candidate_min_nodes", -1)):
        with pytest.raises(ValueError, match=f"model.{field}"):
            MTLKDStudent(16, 1, 2, 4, 32, **{field: value})
