"""R3C: solution bookkeeping, route reordering, and never worse / never infeasible."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.lightning_modules.mtlkd.r3c import customer_order, r3c, reorder_routes, route_actions
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.problems.vrp.env import random_feasible_rollout, solution
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS
from tests.devices import DEVICES

SEQUENCE = torch.tensor([[0, 1, 2, 0, 3, 0, 0, 4, 5, 0]])


def tiny_student(seed: int = 0, device: str = "cpu") -> HeavyDecoderPolicy:
    """An untrained small student policy (seeded), in eval mode on `device`."""
    torch.manual_seed(seed)
    policy = HeavyDecoderPolicy(embed_dim=16, decoder_layers=2, num_heads=4, ff_dim=32)
    return policy.eval().to(device)


def test_customer_order_and_route_actions_round_trip() -> None:
    """[0 1 2 0 3 0 0 4 5 0] is order (1..5) with route starts at 1, 3, 4; writing it back
    gives the same routes; keeping positions 0-2 gives the prefix actions with -1 padding."""
    order, starts = customer_order(SEQUENCE, 5)
    assert order.tolist() == [[1, 2, 3, 4, 5]]
    assert starts.tolist() == [[True, False, True, True, False]]
    everything = route_actions(order, starts, torch.ones(1, 5, dtype=torch.bool), pad=0)
    assert everything.tolist() == [[0, 1, 2, 0, 3, 0, 4, 5, 0, 0]]
    prefix = route_actions(order, starts, torch.tensor([[True, True, True, False, False]]), -1)
    assert prefix.tolist() == [[0, 1, 2, 0, 3, -1, -1, -1, -1, -1]]


def test_reordering_keeps_every_route_and_its_internal_order(device: str) -> None:
    """Random reorderings of 3 routes yield each route intact, starting with its flag, and
    over 40 draws more than one route order (CPU draws, routes on each device)."""
    order, starts = customer_order(SEQUENCE.to(device), 5)
    generator = torch.Generator().manual_seed(0)
    seen = set()
    for _ in range(40):
        draws = torch.rand(1, 5, generator=generator).to(device)
        new_order, new_starts = reorder_routes(order, starts, draws)
        routes, current = [], []
        for node, start in zip(new_order[0].tolist(), new_starts[0].tolist(), strict=True):
            if start and current:
                routes.append(tuple(current))
                current = []
            current.append(node)
        routes.append(tuple(current))
        assert sorted(routes) == [(1, 2), (3,), (4, 5)]
        seen.add(tuple(routes))
    assert len(seen) > 1


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=16)
@given(
    name=st.sampled_from(list(ALL_VARIANTS)),
    num_customers=st.integers(4, 14),
    seed=st.integers(0, 10_000),
)
def test_r3c_never_worsens_and_never_returns_an_infeasible_solution(
    name: str, num_customers: int, seed: int, device: str
) -> None:
    """From random feasible solutions, 6 rounds of R3C with an untrained student: every
    solution passes the validator at the reported cost, no cost rises, the history is
    monotone and starts at the input's cost."""
    batch = generate(name, num_customers, 6, seed=seed, device=device)
    start = solution(random_feasible_rollout(batch, torch.Generator().manual_seed(seed)))
    before = validate_batch(batch, start)
    student = tiny_student(device=device)
    with torch.no_grad():
        improved, cost, history = r3c(
            student, batch, start, 6, (1, num_customers), torch.Generator().manual_seed(1)
        )
    assert improved.device.type == device
    after = validate_batch(batch, improved)
    np.testing.assert_allclose(after, cost.cpu().numpy(), atol=1e-6)
    assert (after <= before + 1e-9).all()
    np.testing.assert_allclose(history[0].cpu().numpy(), before, atol=1e-6)
    assert bool((history[1:] <= history[:-1]).all())


def test_r3c_improves_random_solutions_with_a_greedy_student(device: str) -> None:
    """On CVRP with random starting solutions, 20 rounds lower the mean cost (each device)."""
    batch = generate("CVRP", 20, 8, seed=4, device=device)
    start = solution(random_feasible_rollout(batch, torch.Generator().manual_seed(0)))
    with torch.no_grad():
        _, cost, _ = r3c(tiny_student(device=device), batch, start, 20, (2, 10), torch.Generator())
    assert float(cost.mean()) < 0.95 * float(validate_batch(batch, start).mean())


@pytest.mark.parametrize(
    ("iterations", "segment", "message"),
    [(-1, (1, 2), "iterations"), (1, (0, 2), "segment"), (1, (3, 2), "segment")],
)
def test_bad_arguments_fail(iterations: int, segment: tuple[int, int], message: str) -> None:
    """Negative iterations and empty or inverted segments are refused by name."""
    batch = generate("CVRP", 5, 1, seed=0)
    with pytest.raises(ValueError, match=message):
        r3c(tiny_student(), batch, SEQUENCE, iterations, segment, torch.Generator())


def routes(sequence: Tensor) -> list[tuple[int, ...]]:
    """The routes of one node sequence (validator format), empty ones and padding dropped."""
    found, current = [], []
    for node in [*sequence.tolist(), 0]:
        if node == 0 and current:
            found.append(tuple(current))
            current = []
        elif node:
            current.append(node)
    return found


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=6)
@given(name=st.sampled_from(list(ALL_VARIANTS)), seed=st.integers(0, 10_000))
def test_r3c_results_do_not_depend_on_the_chunk_size(name: str, seed: int, device: str) -> None:
    """R3C (8 rounds, generator seeded 3 per call as the student module does) on 6 instances as
    one chunk of 6 and as chunks of 2 and 4 gives the same costs and the same routes."""
    batch = generate(name, 12, 6, seed=seed, device=device)
    start = solution(random_feasible_rollout(batch, torch.Generator().manual_seed(seed)))
    student = tiny_student(device=device)

    def improve(rows: slice) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            improved, cost, _ = r3c(
                student, batch.index(rows), start[rows], 8, (2, 6), torch.Generator().manual_seed(3)
            )
        return improved, cost

    whole, whole_cost = improve(slice(0, 6))
    (head, head_cost), (tail, tail_cost) = improve(slice(0, 2)), improve(slice(2, 6))
    assert torch.equal(torch.cat([head_cost, tail_cost]), whole_cost)
    chunked = [*head, *tail]
    assert [routes(row) for row in chunked] == [routes(row) for row in whole]
    assert bool((whole_cost < solution_costs(batch, start)).any())


def solution_costs(batch: VRPBatch, sequence: Tensor) -> Tensor:
    """Validator costs [B] of `sequence` as a tensor on the batch's device."""
    return torch.from_numpy(validate_batch(batch, sequence)).to(sequence.device)
