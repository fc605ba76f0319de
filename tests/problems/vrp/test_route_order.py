"""MVMoE's backhaul rule as its env drives routes: the validator's "as_given" mode and the route
reordering, against a re-implementation of `envs/VRPBEnv.py`'s load update."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from optiforge.problems.vrp.env import random_feasible_rollout, solution
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.route_order import mvmoe_route_order
from optiforge.problems.vrp.routes import split_routes
from optiforge.problems.vrp.validator import InfeasibleSolution, validate

EPSILON = 1e-5  # MVMoE's round_error_epsilon


def mvmoe_env_accepts(linehaul: np.ndarray, backhaul: np.ndarray, capacity: float, seq) -> bool:
    """MVMoE's VRPBEnv, step by step: demands signed and divided by the capacity; the load (its
    remaining capacity) is 1 at the depot, 0 instead when no linehaul is left unserved; a node is
    refused when load + eps < demand or load - demand > 1 + eps; serving it does load -= demand.
    Visits are checked too (each customer once)."""
    demand = (np.asarray(linehaul, float) - np.asarray(backhaul, float)) / capacity
    unserved = {int(i) for i in np.flatnonzero(np.asarray(linehaul) > 0)}
    visited: set[int] = set()
    load = 1.0
    for node in [int(x) for x in seq]:
        if node == 0:
            load = 1.0 if unserved else 0.0
            continue
        if node in visited or load + EPSILON < demand[node] or load - demand[node] > 1 + EPSILON:
            return False
        load -= demand[node]
        visited.add(node)
        unserved.discard(node)
    return visited == set(range(1, len(demand)))


def line_instance(linehaul: list[float], backhaul: list[float], capacity: float = 10.0):
    """Signed-load VRPB instance with customers on a line (no windows, no limit)."""
    n = len(linehaul)
    locs = np.stack([np.arange(n + 1) / (n + 1), np.zeros(n + 1)], 1)
    return {
        "locs": locs,
        "linehaul_demand": np.array([0.0, *linehaul]),
        "backhaul_demand": np.array([0.0, *backhaul]),
        "capacity": np.array(capacity),
        "time_windows": np.array([[0.0, np.inf]] * (n + 1)),
        "service_time": np.zeros(n + 1),
        "distance_limit": np.array(np.inf),
        "open_route": np.array(False),
        "mixed_backhaul": np.array(True),
        "signed_load": np.array(True),
    }


def accepted(instance: dict, seq: list[int], route_order: str = "as_given") -> bool:
    try:
        validate(instance, seq, route_order=route_order)
    except InfeasibleSolution:
        return False
    return True


def reorder(instance: dict, seq: list[int]) -> list[int]:
    out = mvmoe_route_order(
        torch.tensor([seq]),
        torch.as_tensor(instance["linehaul_demand"])[None],
        torch.as_tensor(instance["signed_load"])[None],
    )
    return out[0].tolist()


def reference(instance: dict, seq: list[int]) -> bool:
    return mvmoe_env_accepts(
        instance["linehaul_demand"], instance["backhaul_demand"], instance["capacity"], seq
    )


def test_passes_only_after_reordering() -> None:
    """Customer 1 picks up 4, customers 2, 3 deliver 6 and 3: the backhaul-only route first is
    refused by MVMoE's env and the validator as given, accepted as a set; reordered (it moves
    last) both accept it at the same cost."""
    inst = line_instance([0, 6, 3], [4, 0, 0])
    seq = [0, 1, 0, 2, 3, 0]
    assert not reference(inst, seq)
    assert not accepted(inst, seq)
    assert accepted(inst, seq, "any")
    fixed = reorder(inst, seq)
    assert fixed == [0, 2, 3, 0, 1, 0]
    assert reference(inst, fixed)
    assert validate(inst, fixed) == pytest.approx(validate(inst, seq, route_order="any"))


def test_no_order_passes() -> None:
    """A route that picks up 4 before delivering 6 breaks the rule in every order of the
    routes, for MVMoE's env and for the validator in both modes; reordering cannot help."""
    inst = line_instance([0, 6, 3], [4, 0, 0])
    routes = [[1, 2], [3]]
    for order in itertools.permutations(routes):
        seq = [node for route in order for node in [0, *route]] + [0]
        assert not reference(inst, seq)
        assert not accepted(inst, seq)
        assert not accepted(inst, seq, "any")
        assert not reference(inst, reorder(inst, seq))


def random_sequences(n: int, count: int, seed: int) -> list[list[int]]:
    """Random permutations of the customers cut into random routes (many break the rule)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        seq = [0]
        for node in rng.permutation(np.arange(1, n + 1)).tolist():
            seq.append(node)
            if rng.random() < 0.35:
                seq.append(0)
        out.append([*seq, 0])
    return out


def instance_row(batch: VRPBatch, row: int) -> dict:
    return {name: value[row].numpy() for name, value in vars(batch).items()}


def test_validator_as_given_equals_mvmoe_env_on_random_solutions() -> None:
    """On 12-customer mvmoe VRPB instances (capacity the only constraint), the validator as
    given accepts exactly what MVMoE's env accepts, over random route cuts of random orders
    and over the env's own solutions; every env solution passes once reordered."""
    batch = generate("VRPB", 12, 16, seed=5, convention="mvmoe")
    batch = VRPBatch(**{**vars(batch), "capacity": torch.full((16,), 15.0)})  # binds more
    verdicts = []
    for row in range(batch.batch_size):
        inst = instance_row(batch, row)
        for seq in random_sequences(12, 40, seed=row):
            verdicts.append(reference(inst, seq))
            assert accepted(inst, seq) == verdicts[-1], seq
    assert 0 < sum(verdicts) < len(verdicts)
    state = random_feasible_rollout(batch, torch.Generator().manual_seed(1), num_starts=4)
    rows = state.batch
    as_driven = solution(state)
    fixed = mvmoe_route_order(as_driven, rows.linehaul_demand, rows.signed_load)
    refused_as_driven = 0
    for r in range(as_driven.shape[0]):
        inst = instance_row(rows, r)
        refused_as_driven += not reference(inst, as_driven[r].tolist())
        assert accepted(inst, as_driven[r].tolist()) == reference(inst, as_driven[r].tolist())
        assert reference(inst, fixed[r].tolist())
        assert validate(inst, fixed[r]) == pytest.approx(
            validate(inst, as_driven[r], route_order="any")
        )
        assert sorted(map(sorted, split_routes(fixed[r]))) == sorted(
            map(sorted, split_routes(as_driven[r]))
        )
    assert refused_as_driven > 0  # the env's own order does break MVMoE's rule


def test_other_rules_are_left_alone() -> None:
    """Rows without signed_load keep their order, including a backhaul-only route first."""
    seq = torch.tensor([[0, 1, 0, 2, 3, 0], [0, 1, 0, 2, 3, 0]])
    linehaul = torch.tensor([[0.0, 0.0, 6.0, 3.0]] * 2)
    out = mvmoe_route_order(seq, linehaul, torch.tensor([False, True]))
    assert out.tolist() == [[0, 1, 0, 2, 3, 0], [0, 2, 3, 0, 1, 0]]
