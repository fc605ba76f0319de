"""Batched VRP environment in torch for all 16 variants (no Python loop over instances).

Shapes: B instances, S starts per instance, R = S * B state rows (row r = s * B + b belongs to
instance b and start s, the POMO layout), N = n + 1 nodes, T = steps taken so far.

Actions are node indices; 0 returns to the depot (for an open route it just ends the route, at
no cost) and starts a new vehicle at the depot's earliest time. Masking rules (`action_mask`),
with `DECODING_TOLERANCE` slack on every limit (half the validator's, see `instance.py`):

- customer j is legal iff it is unvisited and: its demand fits (strict backhaul: linehaul load
  + d_j <= Q and no backhaul served yet in the route for a linehaul j, backhaul load + p_j <= Q
  for a backhaul j; mixed: D + M + d_j <= Q for a linehaul j, where D is the route's linehaul so
  far and M the largest pickup surplus (picked - delivered) over the route's prefixes, and
  P + p_j <= Q for a backhaul j, which is exactly "the running load, starting with the route's
  linehaul total, stays within Q"; signed load, MVMoE's rule of `instance.py` on one route: a
  linehaul j needs M = 0 (no pickup ahead of the deliveries so far) and D - P + d_j <= Q, a
  backhaul j needs P + p_j <= D on a route with a linehaul, P + p_j <= Q on one without, which
  then stays a pure-backhaul route); arrival <= latest_j; the route could still return to the
  depot afterwards: length + d_cur,j + d_j0 <= L and max(arrival, earliest_j) + s_j + d_j0 <=
  depot latest (both without the return term for open routes).
- the depot is legal from a customer (always feasible: every legal move kept the return
  possible) and at the depot only once all customers are served (after that it is the only
  legal action and a no-op, so finished rows simply idle). Depot-to-depot while customers remain
  is masked: it is an empty route and would let a policy loop forever; it is the one move the
  validator tolerates (repeated zeros) that the env refuses.

No dead ends: at a customer the depot is legal; at the depot with customers left, every
unserved customer is feasible on an out-and-back route, which `VRPBatch.check()` guarantees
(run when a batch is built and again by `reset`).
The mask is exact: a prefix plus a legal action can always be completed (close the route, then
one route per remaining customer), and an illegal customer action can never be completed.
The env judges the signed rule per route, whatever the order of the routes (the validator's
`route_order="any"`): MVMoE's env drives routes in order (a route's remaining capacity starts at
Q while a linehaul is unserved, so backhaul-only routes come last), which accepts the same sets
of routes once they are reordered; here a backhaul-only route may be built at any point, so
replaying routes in any order (R3C's route reordering) stays legal, and every solution the
models return is put into MVMoE's order first (`optiforge.problems.vrp.route_order`). The
distance limit gets `DECODING_TOLERANCE` absolute slack (the validator's is absolute there).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

from optiforge.problems.seeded_draws import uniform
from optiforge.problems.vrp.instance import DECODING_TOLERANCE, VRPBatch, slack_limit


@dataclass(frozen=True)
class VRPState:
    """Decoding state; every field is a tensor (or a tuple of them), shapes in the module doc.

    Attributes:
        batch: the instances repeated per start, R rows.
        dist: distance matrix [B, N, N] of the B distinct instances (not repeated).
        instance: [R] long, the instance (row of `dist`) each state row belongs to.
        return_dist: [R, N] length of the return leg from each node (0 for open routes).
        current: [R] long, current node.
        visited: [R, N] bool, customers served (depot column always False).
        served: [R] long, number of customers served.
        time: [R] time at which the vehicle leaves `current`.
        route_length: [R] length of the current route so far (return leg not included).
        linehaul_load: [R] linehaul demand served in the current route (D).
        backhaul_load: [R] backhaul demand picked up in the current route (P).
        peak_surplus: [R] max over the route's prefixes of (picked - delivered), >= 0 (M).
        after_backhaul: [R] bool, the current route has served a backhaul customer.
        capacity_limit, length_limit, close_limit: [R] capacity, distance limit and depot
            latest time (inf for open routes), each with the feasibility tolerance added.
        late_limit: [R, N] latest service start with the tolerance added.
        actions: T tensors [R] long, the actions taken (including idle depot moves).
    """

    batch: VRPBatch
    dist: Tensor
    instance: Tensor
    return_dist: Tensor
    current: Tensor
    visited: Tensor
    served: Tensor
    time: Tensor
    route_length: Tensor
    linehaul_load: Tensor
    backhaul_load: Tensor
    peak_surplus: Tensor
    after_backhaul: Tensor
    capacity_limit: Tensor
    length_limit: Tensor
    close_limit: Tensor
    late_limit: Tensor
    actions: tuple[Tensor, ...]

    @property
    def num_rows(self) -> int:
        return self.current.shape[0]


def _initial_state(batch: VRPBatch, num_starts: int) -> VRPState:
    b, n = batch.batch_size, batch.num_nodes
    instance = torch.arange(b, device=batch.locs.device).repeat(num_starts)
    rows = batch.index(instance)
    dist = batch.distances()
    zeros = torch.zeros(b * num_starts, dtype=batch.locs.dtype, device=batch.locs.device)
    return VRPState(
        batch=rows,
        dist=dist,
        instance=instance,
        return_dist=torch.where(rows.open_route[:, None], 0.0, dist[:, :, 0][instance]),
        current=torch.zeros_like(instance),
        visited=torch.zeros(b * num_starts, n, dtype=torch.bool, device=instance.device),
        served=torch.zeros_like(instance),
        time=rows.time_windows[:, 0, 0].clone(),
        route_length=zeros,
        linehaul_load=zeros,
        backhaul_load=zeros,
        peak_surplus=zeros,
        after_backhaul=torch.zeros_like(instance, dtype=torch.bool),
        capacity_limit=slack_limit(rows.capacity),
        length_limit=rows.distance_limit + DECODING_TOLERANCE,  # absolute, as the validator
        close_limit=torch.where(
            rows.open_route, torch.inf, slack_limit(rows.time_windows[:, 0, 1])
        ),
        late_limit=slack_limit(rows.time_windows[:, :, 1]),
        actions=(),
    )


def _left_align(prefix: Tensor) -> Tensor:
    """Move padding (-1) to the front as idle depot moves (0), keeping the order of the rest."""
    order = torch.argsort((prefix >= 0).to(torch.int8), dim=1, stable=True)
    return prefix.gather(1, order).clamp(min=0)


def reset(batch: VRPBatch, num_starts: int = 1, prefix: Tensor | None = None) -> VRPState:
    """Start state for `num_starts` copies of every instance (R = num_starts * B rows).

    Without a prefix and with num_starts > 1, start s first visits customer s + 1 (POMO's
    distinct first nodes; needs num_starts <= n). With `prefix` [B, P] long (actions in the
    env's format; -1 pads a shorter row, zeros while at the depot are idle moves), every copy
    of instance b starts after replaying prefix[b]; an infeasible prefix action raises.
    `batch` is checked again (`VRPBatch.check`, also catching in-place edits since it was built):
    the no-dead-end guarantee rests on it, so bad input raises here, never as a dead end later.
    """
    batch.check()
    n_customers = batch.num_nodes - 1
    if num_starts < 1 or (prefix is None and num_starts > n_customers):
        raise ValueError(f"num_starts must be in [1, {n_customers}], got {num_starts}")
    state = _initial_state(batch, num_starts)
    if prefix is None:
        if num_starts > 1:
            first = torch.arange(1, num_starts + 1, device=state.current.device)
            state = step(state, first.repeat_interleave(batch.batch_size))
        return state
    prefix = torch.as_tensor(prefix, dtype=torch.long, device=state.current.device)
    if prefix.dim() != 2 or prefix.shape[0] != batch.batch_size:
        raise ValueError(f"prefix must have shape [{batch.batch_size}, P], got {prefix.shape}")
    if ((prefix < -1) | (prefix > n_customers)).any():
        raise ValueError(f"prefix entries must be -1 (padding) or nodes in [0, {n_customers}]")
    prefix = _left_align(prefix).repeat(num_starts, 1)
    for t in range(prefix.shape[1]):
        action = prefix[:, t]
        idle = (action == 0) & (state.current == 0)
        legal = action_mask(state).gather(1, action[:, None]).squeeze(1) | idle
        if not bool(legal.all()):
            row = int((~legal).nonzero()[0]) % batch.batch_size
            raise ValueError(f"prefix[{row}]: action {int(action[row])} is infeasible")
        state = step(state, action)
    return state


def _take(values: Tensor, action: Tensor) -> Tensor:
    """values[r, action[r]] for [R, N] values."""
    return values.gather(1, action[:, None]).squeeze(1)


def step(state: VRPState, action: Tensor) -> VRPState:
    """Move every row to `action` [R] (assumed legal under `action_mask`; not re-checked)."""
    b = state.batch
    n = b.num_nodes
    flat = (state.instance * n + state.current) * n + action
    arc = state.dist.reshape(-1)[flat]
    to_depot = action == 0
    arrive = state.time + arc
    leave = torch.maximum(arrive, _take(b.time_windows[:, :, 0], action)) + _take(
        b.service_time, action
    )
    delivered = state.linehaul_load + _take(b.linehaul_demand, action)
    picked = state.backhaul_load + _take(b.backhaul_demand, action)
    surplus = torch.maximum(state.peak_surplus, picked - delivered)
    visited = state.visited.scatter(1, action[:, None], True)
    visited[:, 0] = False
    zero = torch.zeros_like(arc)
    return VRPState(
        batch=b,
        dist=state.dist,
        instance=state.instance,
        return_dist=state.return_dist,
        current=action,
        visited=visited,
        served=state.served + (~to_depot).long(),
        time=torch.where(to_depot, b.time_windows[:, 0, 0], leave),
        route_length=torch.where(to_depot, zero, state.route_length + arc),
        linehaul_load=torch.where(to_depot, zero, delivered),
        backhaul_load=torch.where(to_depot, zero, picked),
        peak_surplus=torch.where(to_depot, zero, surplus),
        after_backhaul=~to_depot & (state.after_backhaul | (_take(b.backhaul_demand, action) > 0)),
        capacity_limit=state.capacity_limit,
        length_limit=state.length_limit,
        close_limit=state.close_limit,
        late_limit=state.late_limit,
        actions=(*state.actions, action),
    )


def action_mask(state: VRPState) -> Tensor:
    """Legal actions [R, N] bool under the rules in the module docstring."""
    b = state.batch
    n = b.num_nodes
    d_next = state.dist.reshape(-1, n).index_select(0, state.instance * n + state.current)
    back = state.return_dist  # [R, N], 0 for open routes
    arrive = state.time[:, None] + d_next
    start = torch.maximum(arrive, b.time_windows[:, :, 0])
    ok = ~state.visited & (arrive <= state.late_limit)
    ok &= start + b.service_time + back <= state.close_limit[:, None]  # inf for open routes
    ok &= d_next + back <= (state.length_limit - state.route_length)[:, None]

    # Capacity as two headrooms per row (a customer has at most one kind of demand, and both
    # headrooms are >= 0): linehaul d_j <= H, backhaul p_j <= G. Strict: H = Q - D before the
    # route's first backhaul, else 0 (zero-demand customers stay legal); mixed: H = Q - D - M;
    # both G = Q - P. Signed: H = Q - D + P while no prefix picked up more than it delivered
    # (M = 0, up to the tolerance), else 0; G = D - P on a route with a linehaul (D > 0), else
    # Q - P (the limit 0 of P_k - D_k <= 0 gets the absolute tolerance).
    cap, delivered, picked = state.capacity_limit, state.linehaul_load, state.backhaul_load
    strict_room = torch.where(state.after_backhaul, 0.0, cap - delivered)
    mixed_room = cap - delivered - state.peak_surplus
    balanced = state.peak_surplus <= DECODING_TOLERANCE
    signed_room = torch.where(balanced, cap - delivered + picked, 0.0)
    linehaul_room = torch.where(b.mixed_backhaul, mixed_room, strict_room)
    linehaul_room = torch.where(b.signed_load, signed_room, linehaul_room).clamp(min=0.0)
    pickup_room = delivered - picked + DECODING_TOLERANCE
    signed_pickup = torch.where(delivered > 0, pickup_room, cap - picked)
    backhaul_room = torch.where(b.signed_load, signed_pickup, cap - picked).clamp(min=0.0)
    ok &= b.linehaul_demand <= linehaul_room[:, None]
    ok &= b.backhaul_demand <= backhaul_room[:, None]

    ok[:, 0] = (state.current != 0) | (state.served == n - 1)
    return ok


def done(state: VRPState) -> Tensor:
    """[R] bool: every customer served and the vehicle back at (or its route ended at) 0."""
    return (state.served == state.batch.num_nodes - 1) & (state.current == 0)


def solution(state: VRPState) -> Tensor:
    """Node sequences [R, T + 1] in the validator's format: a leading 0, then the actions."""
    start = torch.zeros_like(state.current)
    return torch.stack([start, *state.actions], 1)


def cost(state: VRPState) -> Tensor:
    """Total route length [R] (float64 sum of the arcs); open routes pay no return to 0."""
    return sequence_cost(state.dist, state.instance, state.batch.open_route, solution(state))


def sequence_cost(dist: Tensor, instance: Tensor, open_route: Tensor, sequence: Tensor) -> Tensor:
    """Length [R] of node sequences [R, T] (validator format) of instances `instance` [R] with
    distance matrices `dist` [B, N, N]; arcs into the depot are free on open routes [R]."""
    n = dist.shape[-1]
    flat = (instance[:, None] * n + sequence[:, :-1]) * n + sequence[:, 1:]
    arcs = dist.reshape(-1)[flat].double()
    free = open_route[:, None] & (sequence[:, 1:] == 0)
    return torch.where(free, 0.0, arcs).sum(1)


def hide(state: VRPState, hidden: Tensor) -> VRPState:
    """`state` with the customers in `hidden` [R, N] bool counted as served: they can no longer
    be chosen and `done` no longer waits for them (R3C keeps them in untouched routes)."""
    hidden = hidden & ~state.visited
    hidden[:, 0] = False
    return replace(state, visited=state.visited | hidden, served=state.served + hidden.sum(1))


def random_feasible_rollout(
    batch: VRPBatch,
    generator: torch.Generator,
    num_starts: int = 1,
    prefix: Tensor | None = None,
) -> VRPState:
    """Finished state after uniform random legal actions (`generator` on any device)."""
    state = reset(batch, num_starts, prefix)
    max_steps = 2 * (batch.num_nodes - 1)
    for _ in range(max_steps + 1):
        if bool(done(state).all()):
            return state
        mask = action_mask(state)
        noise = uniform(tuple(mask.shape), generator, mask.device)
        state = step(state, noise.masked_fill(~mask, -1.0).argmax(1))
    raise RuntimeError(f"rollout not finished after {max_steps} steps: a dead end in the mask")
