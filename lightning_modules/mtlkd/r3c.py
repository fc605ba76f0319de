"""R3C, Random Reordering Re-Construction (MTL-KD's improvement of LEHD's RRC), batched.

One iteration, for every instance of the batch at once:
1. Write the current solution as its customer order [B, n] with route-start flags.
2. Reorder its routes randomly, each route kept intact: LEHD flips routes, which would break
   time windows, the linehaul-before-backhaul order and open routes; a permutation of whole
   routes keeps every route, hence the solution, feasible and of the same cost.
3. Cut a random segment: from customer position p (uniform) over `length` customers (uniform
   in [min_segment, max_segment]), extended to the end of the route it ends in, so that the
   routes after it are complete and untouched.
4. Re-construct the segment with the policy: the env replays the prefix (the routes before p
   and the start of p's route, so the vehicle is mid-route with its real load, time and
   length), hides the customers after the segment, and the policy decodes greedily until the
   segment's customers are served. The env's masks keep it feasible; prefix + new segment +
   untouched routes is therefore a feasible solution.
5. Keep the candidate where it is strictly shorter.
Never worse, never infeasible (tested with the validator over all 16 variants). The env judges
MVMoE's signed load rule per route, so the result's routes are put into an order MVMoE's env
accepts before they are returned (`optiforge.problems.vrp.route_order`, the cost unchanged).

Random draws: every instance has its own stream (`instance_streams`: seeded from one draw of
the caller's generator and the instance's data), so an instance's result does not depend on the
evaluation chunk size or on the other instances of its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch
from torch import Tensor

from optiforge.lightning_modules.mtlkd.instance_streams import (
    instance_generators,
    stream_uniform,
    uniform_integers,
)
from optiforge.lightning_modules.mtlkd.rollout import Decode, Rollout
from optiforge.problems.seeded_draws import integers
from optiforge.problems.vrp import env
from optiforge.problems.vrp.env import VRPState
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.route_order import mvmoe_route_order


class Reconstructor(Protocol):
    """A policy that can encode instances and finish a given env state."""

    def encode(self, batch: VRPBatch) -> Tensor: ...

    def decode_from(self, h: Tensor, state: VRPState, decode: Decode) -> Rollout: ...


def customer_order(sequence: Tensor, num_customers: int) -> tuple[Tensor, Tensor]:
    """Customers in visiting order [B, n] and route-start flags [B, n] of node sequences
    [B, T] (validator format, every customer exactly once)."""
    is_customer = sequence > 0
    previous = torch.cat([torch.zeros_like(sequence[:, :1]), sequence[:, :-1]], 1)
    order = sequence[is_customer].view(-1, num_customers)
    starts = (previous == 0)[is_customer].view(-1, num_customers)
    return order, starts


def route_actions(order: Tensor, starts: Tensor, keep: Tensor, pad: int) -> Tensor:
    """Env actions [B, 2 n] that drive the kept customers of `order` (a 0 before each route
    start), in order, followed by `pad` (0: depot idles; -1: the env's prefix padding)."""
    pairs = torch.stack([torch.where(starts, 0, -1), order], -1)  # [B, n, 2]: (0 or -1, c)
    flat = torch.where(keep[..., None], pairs, -1).flatten(1)
    flat = flat.gather(1, torch.argsort((flat < 0).to(torch.int8), dim=1, stable=True))
    return flat if pad == -1 else flat.clamp(min=pad)


def reorder_routes(order: Tensor, starts: Tensor, draws: Tensor) -> tuple[Tensor, Tensor]:
    """`order` and `starts` [B, n] with whole routes permuted at random by U[0, 1) `draws`
    [B, n] (the order inside a route kept, so each route still begins with its start flag)."""
    n = order.shape[1]
    route = starts.long().cumsum(1) - 1  # [B, n] route id of each position
    rank = torch.argsort(draws, 1)
    key = rank.gather(1, route) * n + torch.arange(n, device=order.device)
    permutation = torch.argsort(key, 1)
    return order.gather(1, permutation), starts.gather(1, permutation)


def reconstruct_once(
    policy: Reconstructor,
    h: Tensor,
    batch: VRPBatch,
    sequence: Tensor,
    segment: tuple[int, int],
    generators: Sequence[torch.Generator],
) -> Tensor:
    """One R3C candidate per instance of `sequence` [B, T]: steps 1-4 of the module doc, with
    the draws of instance b from `generators[b]` (n + 2 per round)."""
    n = batch.num_nodes - 1
    device = sequence.device
    draws = stream_uniform(generators, n + 2, device)
    order, starts = reorder_routes(*customer_order(sequence, n), draws[:, :n])
    b = order.shape[0]
    length = uniform_integers(draws[:, n], segment[0], segment[1] + 1).clamp(max=n)
    begin = uniform_integers(draws[:, n + 1], 0, n - length + 1)
    route = starts.long().cumsum(1) - 1
    last_route = route.gather(1, (begin + length - 1)[:, None])
    in_prefix = torch.arange(n, device=device)[None] < begin[:, None]
    in_suffix = route > last_route
    state = env.reset(batch, 1, prefix=route_actions(order, starts, in_prefix, pad=-1))
    hidden = torch.zeros(b, n + 1, dtype=torch.bool, device=device)
    hidden.scatter_(1, order, in_suffix)
    rollout = policy.decode_from(h, env.hide(state, hidden), "greedy")
    return torch.cat([env.solution(rollout.state), route_actions(order, starts, in_suffix, 0)], 1)


def r3c(
    policy: Reconstructor,
    batch: VRPBatch,
    sequence: Tensor,
    iterations: int,
    segment: tuple[int, int],
    generator: torch.Generator,
) -> tuple[Tensor, Tensor, Tensor]:
    """Improve solutions `sequence` [B, T] of `batch` by `iterations` R3C rounds; `generator`
    gives one draw, the base seed of the per-instance streams (module doc).

    Returns the final sequences [B, T'], their costs [B] (float64, the env's arc sum) and the
    cost after every round [iterations + 1, B] (row 0: the input), for budget curves.
    `segment` = (min, max) customers cut per round, 1 <= min <= max.
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    if not 1 <= segment[0] <= segment[1]:
        raise ValueError(f"segment must be (min, max) with 1 <= min <= max, got {segment}")
    dist = batch.distances()
    rows = torch.arange(batch.batch_size, device=sequence.device)

    def length(candidate: Tensor) -> Tensor:
        return env.sequence_cost(dist, rows, batch.open_route, candidate)

    best, best_cost = sequence, length(sequence)
    history = [best_cost]
    base = int(integers(0, 2**62, (1,), generator, "cpu"))
    generators = instance_generators(batch, base)
    h = policy.encode(batch)
    for _ in range(iterations):
        candidate = reconstruct_once(policy, h, batch, best, segment, generators)
        candidate_cost = length(candidate)
        better = candidate_cost < best_cost
        width = max(best.shape[1], candidate.shape[1])
        best = torch.where(better[:, None], _pad(candidate, width), _pad(best, width))
        best_cost = torch.where(better, candidate_cost, best_cost)
        history.append(best_cost)
    best = mvmoe_route_order(best, batch.linehaul_demand, batch.signed_load)
    return best, best_cost, torch.stack(history)


def _pad(sequence: Tensor, width: int) -> Tensor:
    """Right-pad node sequences with depot zeros to `width` columns."""
    return torch.nn.functional.pad(sequence, (0, width - sequence.shape[1]))
