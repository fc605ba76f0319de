"""Tests for the batched VRP environment: masks against the validator, POMO, prefixes, symmetry."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.vrp.augment import augment_8
from optiforge.problems.vrp.env import (
    action_mask,
    cost,
    done,
    hide,
    random_feasible_rollout,
    reset,
    sequence_cost,
    solution,
    step,
)
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import FEASIBILITY_TOLERANCE, VRPBatch
from optiforge.problems.vrp.route_order import mvmoe_route_order
from optiforge.problems.vrp.validator import FIELDS, InfeasibleSolution, validate, validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS, variant


def rows_as_arrays(batch: VRPBatch) -> list[dict[str, np.ndarray]]:
    arrays = {f: getattr(batch, f).numpy() for f in FIELDS}
    return [{f: a[i] for f, a in arrays.items()} for i in range(batch.batch_size)]


def completable(instance: dict[str, np.ndarray], prefix: list[int], action: int) -> bool:
    """Exact oracle: prefix + action can be completed iff closing the route right after it and
    serving every remaining customer on its own out-and-back route validates (closing a route
    early never hurts: triangle inequality, monotone loads; the instances pass `check()`)."""
    seq = [*prefix, action, 0]
    served = set(seq)
    for customer in range(1, len(instance["locs"])):
        if customer not in served:
            seq += [customer, 0]
    try:
        validate(instance, seq, route_order="any")  # the env judges signed routes as a set
    except InfeasibleSolution:
        return False
    return True


def validate_env_solutions(batch: VRPBatch, sequences: torch.Tensor) -> np.ndarray:
    """Validator costs of env solutions, judged as the env builds them (signed routes as a set),
    and equal once put into MVMoE's driving order and judged as given."""
    costs = validate_batch(batch, sequences, route_order="any")
    ordered = mvmoe_route_order(sequences, batch.linehaul_demand, batch.signed_load)
    np.testing.assert_allclose(validate_batch(batch, ordered), costs, atol=1e-9, rtol=0)
    return costs


def tightened(
    batch: VRPBatch,
    capacity: float | None,
    limit_slack: float | None,
    close_slack: float | None,
    zero_demand: bool,
) -> VRPBatch:
    """Make capacity, the distance limit and the depot's closing time bind more often (the
    generator's windows never let the closing time bind: here the depot closes as early as
    `check()` allows and customer windows stay open until then), optionally give customer 1 no
    demand."""
    d0 = torch.linalg.vector_norm(batch.locs[:, 1:] - batch.locs[:, :1], dim=-1)
    if zero_demand:
        linehaul, backhaul = batch.linehaul_demand.clone(), batch.backhaul_demand.clone()
        linehaul[:, 1] = backhaul[:, 1] = 0.0
        batch = replace(batch, linehaul_demand=linehaul, backhaul_demand=backhaul)
    if capacity is not None:
        batch = replace(batch, capacity=torch.full_like(batch.capacity, capacity))
    if limit_slack is not None:
        tight = (2 * d0.max(1).values + 1e-6) * (1 + limit_slack)
        limit = torch.where(batch.distance_limit.isinf(), batch.distance_limit, tight)
        batch = replace(batch, distance_limit=limit)
    if close_slack is not None:
        early, service = batch.time_windows[:, 1:, 0], batch.service_time[:, 1:]
        latest_return = (torch.maximum(d0, early) + service + d0).max(1).values
        windows = batch.time_windows.clone()
        close = windows[:, 0, 1]
        tight = (latest_return + 1e-6) * (1 + close_slack)
        windows[:, 0, 1] = torch.where(close.isinf(), close, tight)
        windows[:, 1:, 1] = windows[:, :1, 1]  # late arrivals allowed: the return must bind
        batch = replace(batch, time_windows=windows)
    batch.check()
    return batch


@pytest.mark.parametrize("convention", ["routefinder", "mvmoe"])
@pytest.mark.parametrize("name", sorted(ALL_VARIANTS))
@settings(max_examples=5, deadline=None, derandomize=True, database=None)
@given(
    rule=st.sampled_from(["strict", "mixed", "signed"]),
    n=st.integers(1, 8),
    seed=st.integers(0, 2**31 - 1),
    capacity=st.sampled_from([None, 9.0, 12.0]),
    limit_slack=st.sampled_from([None, 0.0, 0.05]),
    close_slack=st.sampled_from([None, 0.0, 0.2]),
    zero_demand=st.booleans(),
)
def test_mask_equals_validator_completability(
    name: str,
    convention: str,
    rule: str,
    n: int,
    seed: int,
    capacity: float | None,
    limit_slack: float | None,
    close_slack: float | None,
    zero_demand: bool,
) -> None:
    """At every step of random feasible rollouts, in both conventions and under every backhaul
    rule (mvmoe instances are signed; routefinder draws are also tried signed), action j is
    legal iff the validator says prefix + j can still be completed; the one exception is
    depot-to-depot with customers left, which the env masks by design. The finished rollout
    validates at the env's cost."""
    mixed = rule == "mixed" and convention == "routefinder"
    batch = generate(name, n, 3, seed=seed, mixed_backhaul=mixed, convention=convention)
    if rule == "signed":
        batch = replace(batch, signed_load=torch.ones(3, dtype=torch.bool))
    batch = tightened(batch, capacity, limit_slack, close_slack, zero_demand)
    instances = rows_as_arrays(batch)
    gen = torch.Generator().manual_seed(seed)
    state = reset(batch)
    for _ in range(2 * n + 1):
        if bool(done(state).all()):
            break
        mask = action_mask(state)
        prefixes = solution(state).tolist()
        for r in range(batch.batch_size):
            at_depot_with_work = int(state.current[r]) == 0 and not bool(state.visited[r, 1:].all())
            for a in range(n + 1):
                expected = completable(instances[r], prefixes[r], a)
                if a == 0 and at_depot_with_work:
                    expected = False
                assert bool(mask[r, a]) == expected, (name, rule, r, prefixes[r], a)
        noise = torch.rand(mask.shape, generator=gen).masked_fill(~mask, -1.0)
        state = step(state, noise.argmax(1))
    assert bool(done(state).all())
    costs = validate_env_solutions(batch, solution(state))
    np.testing.assert_allclose(costs, cost(state).numpy(), atol=1e-5, rtol=0)


@pytest.mark.parametrize("mixed", [False, True])
def test_pomo_rollouts_end_feasible(mixed: bool, device: str) -> None:
    """n starts per instance begin at distinct customers 1..n and all end valid, every variant,
    on each device (a CPU generator drives the rollout wherever the batch lives)."""
    n, b = 10, 32
    batch = generate("mixed", n, b, seed=11, mixed_backhaul=mixed, device=device)
    state = random_feasible_rollout(batch, torch.Generator().manual_seed(0), num_starts=n)
    assert state.num_rows == n * b and bool(done(state).all())
    assert solution(state).device.type == device
    assert torch.equal(state.actions[0].cpu(), torch.arange(1, n + 1).repeat_interleave(b))
    costs = validate_env_solutions(batch.index(state.instance), solution(state))
    np.testing.assert_allclose(costs, cost(state).cpu().numpy(), atol=1e-5, rtol=0)


@pytest.mark.parametrize("convention", ["routefinder", "mvmoe"])
@pytest.mark.parametrize("name", sorted(ALL_VARIANTS))
def test_env_and_validator_costs_agree(name: str, convention: str, device: str) -> None:
    """Env cost equals the validator's recomputed cost to 1e-5 at n = 50 for every variant in
    both conventions, on each device."""
    mixed = name.endswith("TW") and convention == "routefinder"
    batch = generate(name, 50, 8, seed=3, mixed_backhaul=mixed, convention=convention)
    batch = batch.to(device)
    state = random_feasible_rollout(batch, torch.Generator().manual_seed(1), num_starts=2)
    costs = validate_env_solutions(batch.index(state.instance), solution(state))
    np.testing.assert_allclose(costs, cost(state).cpu().numpy(), atol=1e-5, rtol=0)
    if variant(name).open_route:
        closed = replace(state, batch=replace(state.batch, open_route=~state.batch.open_route))
        assert bool((cost(closed) > cost(state)).all())


def test_prefix_restores_the_state() -> None:
    """Replaying ragged prefixes (padded with -1) reproduces the mask seen at that step, and
    rollouts from the prefix keep it and end valid."""
    batch = generate("mixed", 12, 6, seed=4)
    gen = torch.Generator().manual_seed(2)
    state, masks = reset(batch), []
    while not bool(done(state).all()):
        masks.append(action_mask(state))
        noise = torch.rand(masks[-1].shape, generator=gen).masked_fill(~masks[-1], -1.0)
        state = step(state, noise.argmax(1))
    actions = torch.stack(state.actions, 1)
    cuts = [0, 1, 3, 5, 8, 12]
    prefix = torch.full((6, max(cuts)), -1)
    for r, t in enumerate(cuts):
        prefix[r, :t] = actions[r, :t]
    resumed = reset(batch, prefix=prefix)
    mask = action_mask(resumed)
    for r, t in enumerate(cuts):
        assert torch.equal(mask[r], masks[t][r])
    final = random_feasible_rollout(batch, gen, num_starts=3, prefix=prefix)
    assert final.num_rows == 18
    seqs = solution(final)
    for r, t in enumerate(cuts):  # leading 0, then the padding as idle zeros, then the prefix
        assert seqs[r, 1 + max(cuts) - t : 1 + max(cuts)].tolist() == actions[r, :t].tolist()
    validate_env_solutions(batch.index(final.instance), seqs)


def test_bad_prefix_raises() -> None:
    """An infeasible, out-of-range or mis-shaped prefix raises, naming the row."""
    batch = generate("CVRP", 5, 2, seed=0)
    with pytest.raises(ValueError, match=r"prefix\[1\]: action 2 is infeasible"):
        reset(batch, prefix=torch.tensor([[1, 2], [2, 2]]))
    with pytest.raises(ValueError, match="prefix entries"):
        reset(batch, prefix=torch.tensor([[9], [1]]))
    with pytest.raises(ValueError, match="shape"):
        reset(batch, prefix=torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="num_starts"):
        reset(batch, num_starts=6)


def test_return_deadline_and_open_routes() -> None:
    """Customer 2 can be reached from 1 but the vehicle could not get back before the depot
    closes, so it is masked, unless routes are open."""
    locs = torch.tensor([[[0.0, 0.0], [0.5, 0.0], [0.5, 0.5]]])
    batch = VRPBatch(
        locs=locs,
        linehaul_demand=torch.tensor([[0.0, 1.0, 1.0]]),
        backhaul_demand=torch.zeros(1, 3),
        capacity=torch.tensor([10.0]),
        time_windows=torch.tensor([[[0.0, 1.6], [0.0, 1.6], [0.0, 1.6]]]),
        service_time=torch.tensor([[0.0, 0.1, 0.1]]),
        distance_limit=torch.tensor([torch.inf]),
        open_route=torch.tensor([False]),
        mixed_backhaul=torch.tensor([False]),
        signed_load=torch.tensor([False]),
    )
    batch.check()
    after_one = reset(batch, prefix=torch.tensor([[1]]))  # at 1 leaving at 0.6; 2 + back: 1.9
    assert action_mask(after_one)[0].tolist() == [True, False, False]
    opened = replace(batch, open_route=torch.tensor([True]))
    assert action_mask(reset(opened, prefix=torch.tensor([[1]])))[0].tolist() == [True, False, True]


def test_env_slack_is_inside_the_validators() -> None:
    """A route 0.75 tolerances over the distance limit passes the float64 validator but the env
    masks it: the env's half slack keeps float32 drift from producing rejected solutions."""
    locs = torch.tensor([[[0.0, 0.0], [0.3, 0.0], [0.3, 0.4]]])  # 0 -> 1 -> 2 -> 0 is 1.2 long
    batch = VRPBatch(
        locs=locs,
        linehaul_demand=torch.tensor([[0.0, 1.0, 1.0]]),
        backhaul_demand=torch.zeros(1, 3),
        capacity=torch.tensor([10.0]),
        time_windows=torch.tensor([[[0.0, torch.inf]] * 3]),
        service_time=torch.zeros(1, 3),
        distance_limit=torch.tensor([1.2 / (1 + 0.75 * FEASIBILITY_TOLERANCE)]),
        open_route=torch.tensor([False]),
        mixed_backhaul=torch.tensor([False]),
        signed_load=torch.tensor([False]),
    )
    batch.check()
    validate(batch, [0, 1, 2, 0])
    assert action_mask(reset(batch, prefix=torch.tensor([[1]])))[0].tolist() == [True, False, False]


def test_depot_rules() -> None:
    """At the start the depot is masked; when all are served only the depot is legal and
    stepping there is an idle move that changes neither done nor cost."""
    batch = generate("OVRPBLTW", 6, 4, seed=5)
    start = action_mask(reset(batch))
    assert not start[:, 0].any() and start[:, 1:].all()
    final = random_feasible_rollout(batch, torch.Generator().manual_seed(0))
    mask = action_mask(final)
    assert mask[:, 0].all() and not mask[:, 1:].any()
    idle = step(final, torch.zeros(4, dtype=torch.long))
    assert bool(done(idle).all()) and torch.equal(cost(idle), cost(final))


def test_augment_8_keeps_the_instance() -> None:
    """The 8 symmetric copies have the same distances and attributes; a solution replayed on
    every copy costs the same."""
    batch = generate("mixed", 15, 4, seed=6)
    aug = augment_8(batch)
    assert aug.batch_size == 32
    assert torch.equal(aug.locs[:4], batch.locs)
    assert aug.locs.min() >= 0 and aug.locs.max() <= 1
    assert torch.allclose(aug.distances(), batch.distances().repeat(8, 1, 1), atol=1e-6)
    assert len({tuple(aug.locs[k * 4, 1].tolist()) for k in range(8)}) == 8
    for f in fields(batch):
        if f.name != "locs":
            assert torch.equal(
                getattr(aug, f.name),
                getattr(batch, f.name)
                .repeat_interleave(1, 0)
                .repeat(8, *[1] * (getattr(batch, f.name).dim() - 1)),
            )
    final = random_feasible_rollout(batch, torch.Generator().manual_seed(0))
    replayed = reset(aug, prefix=solution(final)[:, 1:].repeat(8, 1))
    assert bool(done(replayed).all())
    np.testing.assert_allclose(cost(replayed).numpy(), cost(final).repeat(8).numpy(), atol=1e-5)


def test_hide_serves_customers_without_visiting_them() -> None:
    """Hidden customers are masked and counted as served: a random rollout from the hidden
    state serves exactly the others, and already visited customers are not counted twice."""
    batch = generate("VRPTW", 8, 4, seed=5)
    state = step(reset(batch), torch.tensor([3, 3, 3, 3]))
    hidden = torch.zeros(4, 9, dtype=torch.bool)
    hidden[:, [2, 3, 5]] = True  # 3 is already visited
    hidden_state = hide(state, hidden)
    assert hidden_state.served.tolist() == [3, 3, 3, 3]
    assert not bool(action_mask(hidden_state)[:, [2, 5]].any())
    generator = torch.Generator().manual_seed(0)
    state = hidden_state
    while not bool(done(state).all()):
        mask = action_mask(state)
        state = step(
            state, torch.rand(mask.shape, generator=generator).masked_fill(~mask, -1).argmax(1)
        )
    visits = solution(state)
    for row in range(4):
        customers = sorted(int(c) for c in visits[row] if c > 0)
        assert customers == [1, 3, 4, 6, 7, 8]


def test_sequence_cost_matches_the_validator_on_open_and_closed_routes() -> None:
    """`sequence_cost` of hand-written sequences equals the validator's cost, repeated depot
    zeros included (open routes do not pay the return)."""
    batch = generate(["CVRP", "OVRP"], 5, 2, seed=1)
    sequences = torch.tensor([[0, 1, 2, 0, 0, 3, 4, 5, 0], [0, 5, 4, 0, 3, 0, 0, 2, 1]])
    costs = sequence_cost(batch.distances(), torch.arange(2), batch.open_route, sequences)
    np.testing.assert_allclose(costs.numpy(), validate_batch(batch, sequences), atol=1e-6)


def test_variant_index_agrees_with_variant_of() -> None:
    """The vectorized variant index names the same variant as `variant_of`, for all 16."""
    names = list(ALL_VARIANTS)
    batch = generate(names, 12, 48, seed=2)
    index = batch.variant_index()
    assert [names[int(i)] for i in index] == [batch.variant_of(r).name for r in range(48)]


@pytest.mark.parametrize(
    ("field", "index", "value", "message"),
    [
        ("locs", (1, 2, 0), float("nan"), r"^instance 1: locs contains NaN$"),
        (
            "linehaul_demand",
            (0, 3),
            99.0,
            r"^instance 0: linehaul_demand: demand 99 of customer 3 exceeds capacity 30$",
        ),
        ("linehaul_demand", (1, 2), -1.0, r"^instance 1: linehaul_demand must be >= 0$"),
    ],
)
def test_reset_rejects_bad_instances(
    field: str, index: tuple[int, ...], value: float, message: str
) -> None:
    """An instance edited in place after it was built (NaN, demand above capacity, negative
    demand) is refused by reset, naming instance and field, before any rollout can dead-end."""
    batch = generate("CVRP", 5, 2, seed=0)
    getattr(batch, field)[index] = value
    with pytest.raises(ValueError, match=message):
        reset(batch)
    with pytest.raises(ValueError, match=message):
        random_feasible_rollout(batch, torch.Generator().manual_seed(0))


def test_reset_of_a_wrongly_shaped_batch_raises() -> None:
    """A batch whose capacity does not have one entry per instance never reaches the env."""
    batch = generate("CVRP", 5, 2, seed=0)
    with pytest.raises(ValueError, match=r"^batch: capacity must have shape \(2,\) \(B\)"):
        reset(replace(batch, capacity=torch.full((3,), 30.0)))
