"""MTL-KD input features: "raw" unchanged, "instance" values by hand, invariance to the horizon."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.lightning_modules import MTLKDStudent, POMOTeacher
from optiforge.lightning_modules.mtlkd.features import (
    context_features,
    customer_features,
    depot_features,
)
from optiforge.lightning_modules.mtlkd.policy_weights import load_policy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch

INF = math.inf


def mixed_batch() -> VRPBatch:
    """Six seeded instances of n = 10 drawn here (the generator only supplies the fields set
    nowhere below, its flags, so that it may change): CVRP, VRPBL, OVRPTW, VRPBLTW, OVRPBTW,
    OVRPL, windows on RouteFinder's 4.6 horizon."""
    g = torch.Generator().manual_seed(123)
    b, n = 6, 10
    locs = torch.rand(b, n + 1, 2, generator=g)
    d0 = torch.linalg.vector_norm(locs[:, 1:] - locs[:, :1], dim=-1)
    demand = torch.randint(1, 10, (b, n), generator=g).float()
    backhaul_rows = torch.tensor([0, 1, 0, 1, 1, 0]).bool()[:, None]
    is_back = (torch.rand(b, n, generator=g) < 0.3) & backhaul_rows
    zero = torch.zeros(b, 1)
    service = 0.15 + 0.03 * torch.rand(b, n, generator=g)
    width = 0.2 + 0.1 * torch.rand(b, n, generator=g)
    early = d0 + torch.rand(b, n, generator=g) * (4.6 - service - width - 2 * d0)
    depot = torch.tensor([0.0, 4.6]).expand(b, 1, 2)
    windows = torch.cat([depot, torch.stack([early, early + width], -1)], 1)
    has_tw = torch.tensor([0, 0, 1, 1, 1, 0]).bool()
    has_limit = torch.tensor([0, 1, 0, 1, 0, 1]).bool()
    return replace(
        generate("CVRP", n, b),
        locs=locs,
        linehaul_demand=torch.cat([zero, torch.where(is_back, 0.0, demand)], 1),
        backhaul_demand=torch.cat([zero, torch.where(is_back, demand, 0.0)], 1),
        capacity=torch.full((b,), 30.0),
        time_windows=torch.where(has_tw[:, None, None], windows, torch.tensor([0.0, INF])),
        service_time=torch.where(has_tw[:, None], torch.cat([zero, service], 1), 0.0),
        distance_limit=torch.where(has_limit, 2 * d0.max(1).values + 0.3, INF),
        open_route=torch.tensor([0, 0, 1, 0, 1, 1]).bool(),
    )


def two_customer_batch(close: float, service: float, limit: float, windows: bool) -> VRPBatch:
    """Depot (0, 0); customers at (0.3, 0.4) (d_01 = 0.5) and (0.6, 0.8) (d_02 = 1); windows
    [1, 1.5] and [0.2 close, 0.5 close] when `windows`; demands 1 and 2 of Q = 4."""
    tw = [[0.0, close], [1.0, 1.5], [0.2 * close, 0.5 * close]] if windows else [[0.0, INF]] * 3
    return replace(
        generate("CVRP", 2, 1),
        locs=torch.tensor([[[0.0, 0.0], [0.3, 0.4], [0.6, 0.8]]]),
        linehaul_demand=torch.tensor([[0.0, 1.0, 2.0]]),
        backhaul_demand=torch.zeros(1, 3),
        capacity=torch.tensor([4.0]),
        time_windows=torch.tensor([tw]),
        service_time=torch.tensor([[0.0, service, service]]) if windows else torch.zeros(1, 3),
        distance_limit=torch.tensor([limit]),
        open_route=torch.tensor([False]),
    )


def test_raw_features_are_the_instance_units() -> None:
    """ "raw" features are exactly the batch's fields (inf -> 0, demands / Q), bit for bit."""
    batch = mixed_batch()
    q = batch.capacity[:, None]
    windows = torch.nan_to_num(batch.time_windows, posinf=0.0)
    expected = [batch.locs, (batch.linehaul_demand / q)[..., None]]
    expected += [(batch.backhaul_demand / q)[..., None], windows, batch.service_time[..., None]]
    assert torch.equal(customer_features(batch, "raw"), torch.cat(expected, -1))
    limit = torch.nan_to_num(batch.distance_limit, posinf=0.0)
    depot = [batch.locs[:, 0], windows[:, 0, 1:], limit[:, None], batch.open_route[:, None]]
    assert torch.equal(depot_features(batch, "raw")[:, 0], torch.cat(depot, -1).float())
    state = env.step(env.reset(batch), torch.full((6,), 3))
    remaining = torch.nan_to_num(batch.distance_limit - state.route_length, posinf=0.0)
    columns = [state.time, state.route_length, remaining, batch.open_route.float()]
    assert torch.equal(context_features(state, "raw")[:, 2:], torch.stack(columns, -1))


# Greedy decodings of `mixed_batch` by shipped weights, recorded with the code before
# `feature_scaling` existed: (actions of instance 0, log-likelihoods of the 6 instances).
SHIPPED_DECODINGS = {
    "teacher_vrptw_n50": (
        [10, 0, 3, 0, 2, 0, 6, 0, 8, 0, 7, 0, 1, 0, 9, 0, 4, 5, 0],
        [-13.090033531188965, -9.49586009979248, -2.5187129974365234]
        + [-3.2028558254241943, -3.1585946083068848, -11.353782653808594],
    ),
    "mtpomo_n50": (
        [9, 10, 7, 3, 6, 0, 5, 1, 4, 8, 2, 0, 0, 0, 0, 0, 0],
        [-3.2906100749969482, -2.547663927078247, -2.873671770095825]
        + [-2.8800079822540283, -2.5902814865112305, -3.197624444961548],
    ),
    "student_n50": (
        [10, 9, 5, 1, 4, 8, 2, 0, 7, 0, 3, 6, 0, 0, 0, 0, 0, 0],
        [-2.441025733947754, -0.7683423757553101, -3.963923215866089]
        + [-2.334982395172119, -3.9605395793914795, -2.4232399463653564],
    ),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_DECODINGS))
def test_shipped_weights_decode_as_before(name: str) -> None:
    """A shipped file (no `feature_scaling` key) loads as "raw" and greedily decodes the fixed
    batch exactly as before the option existed (same actions, log-likelihoods to 1e-5)."""
    policy = load_policy(f"weights/mtlkd/{name}.pt")
    assert policy.feature_scaling == "raw"
    with torch.no_grad():
        rollout = policy(mixed_batch(), 1, "greedy")
    actions, log_likelihood = SHIPPED_DECODINGS[name]
    assert rollout.actions[0].tolist() == actions
    assert torch.allclose(rollout.log_likelihood, torch.tensor(log_likelihood), atol=1e-5)


@pytest.mark.parametrize(
    ("close", "service", "limit"), [(4.6, 0.15, 2.5), (3.0, 0.2, 3.0)], ids=["routefinder", "mvmoe"]
)
def test_instance_features_by_hand(close: float, service: float, limit: float) -> None:
    """Both conventions' horizons: times / l_0, lengths / L, flags on the depot, and the
    context after moving to customer 1 (arrive 0.5, wait to e_1 = 1, leave 1 + s)."""
    batch = two_customer_batch(close, service, limit, windows=True)
    customers = customer_features(batch, "instance")[0, 1:]
    expected = [[0.3, 0.4, 0.25, 0.0, 1 / close, 1.5 / close, service / close]]
    expected += [[0.6, 0.8, 0.5, 0.0, 0.2, 0.5, service / close]]
    assert torch.allclose(customers, torch.tensor(expected))
    assert torch.allclose(depot_features(batch, "instance"), torch.tensor([[[0, 0, 1, 1, 0.0]]]))
    state = env.step(env.reset(batch), torch.tensor([1]))
    context = context_features(state, "instance")[0]
    values = [0.75, 1.0, (1 + service) / close, 0.5 / limit, 1 - 0.5 / limit, 0.0]
    assert torch.allclose(context, torch.tensor(values))


def test_instance_features_without_windows_or_limit_use_the_out_and_back_length() -> None:
    """Without L, lengths (and, without windows, times) are divided by 2 max d_0i = 2; the
    remaining length and both depot flags are 0."""
    batch = two_customer_batch(4.6, 0.0, INF, windows=False)
    assert torch.allclose(depot_features(batch, "instance"), torch.zeros(1, 1, 5))
    assert torch.equal(customer_features(batch, "instance")[0, :, 4:], torch.zeros(3, 3))
    state = env.step(env.step(env.reset(batch), torch.tensor([1])), torch.tensor([2]))
    context = context_features(state, "instance")[0]
    assert torch.allclose(context, torch.tensor([0.25, 1.0, 0.5, 0.5, 0.0, 0.0]))


@settings(max_examples=25, deadline=None)
@given(factor=st.floats(1.0, 3.0), row=st.integers(0, 5))
def test_scaling_every_time_leaves_instance_time_features_unchanged(
    factor: float, row: int
) -> None:
    """Multiplying an instance's windows, service times and depot closing time by c >= 1 (it
    stays feasible) changes no "instance" node or depot feature; the "raw" ones scale by c."""
    batch = mixed_batch().index(row)
    scaled = replace(
        batch, time_windows=batch.time_windows * factor, service_time=batch.service_time * factor
    )
    for features in (customer_features, depot_features):
        assert torch.allclose(features(scaled, "instance"), features(batch, "instance"))
    has_tw = bool(torch.isfinite(batch.time_windows[:, :, 1]).any())
    raw_windows = customer_features(scaled, "raw")[..., 4:]
    assert torch.allclose(raw_windows, customer_features(batch, "raw")[..., 4:] * factor)
    assert torch.equal(raw_windows, customer_features(batch, "raw")[..., 4:]) != (
        has_tw and factor != 1.0
    )


@pytest.mark.parametrize("module", [POMOTeacher, MTLKDStudent])
def test_unknown_feature_scaling_is_one_line_naming_the_field(module: type) -> None:
    """A bad `feature_scaling` raises one ValueError naming the field and the allowed values."""
    with pytest.raises(ValueError, match=r"^model\.feature_scaling must be one of \('raw', "):
        module(feature_scaling="minmax")
