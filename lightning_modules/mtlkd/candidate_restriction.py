"""k-nearest candidate restriction of the heavy decoder at large n (BQ-NCO's remedy).

The heavy decoder re-embeds every remaining node at every step, O(L K^2 d) per step with K the
nodes left, so a greedy decoding of n = 1000 costs ~1000 such steps over ~500 tokens. Restricted,
a step's tokens are only

    the depot  +  the k customers nearest to the current node among the unvisited ones,
                  the legal ones (the env's mask) first, by distance; then, if fewer than k
                  are legal, the nearest illegal unvisited ones as context
               +  the forced action of the step (teacher forcing), when given,

so a step costs O(L k^2 d) whatever n. Every other action gets probability 0.

Feasibility: the rule only removes choices, and never all legal ones. Legal customers come first,
so if any customer is legal, the nearest legal one is a token; if none is, the env's rules make
the depot legal (at a customer the depot is always legal; at the depot with customers left,
every unserved customer is legal on an out-and-back route), and the depot is always a token. So
decoding never dead-ends, and the env's mask still decides what is legal. With k >= the number
of unvisited customers the tokens are exactly the unrestricted ones (same nodes, same order).
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.problems.vrp.env import VRPState


def check_candidates(candidate_k: int | None, candidate_min_nodes: int, prefix: str = "") -> None:
    """Raise one ValueError naming the field when k < 1 or the size threshold is negative."""
    if candidate_k is not None and candidate_k < 1:
        raise ValueError(f"{prefix}candidate_k must be >= 1 or None (off), got {candidate_k}")
    if candidate_min_nodes < 0:
        raise ValueError(f"{prefix}candidate_min_nodes must be >= 0, got {candidate_min_nodes}")


def nearest_candidates(
    state: VRPState, legal: Tensor, k: int, forced: Tensor | None = None
) -> Tensor:
    """Decoder tokens [R, N] bool of every state row (module doc): the depot, the k unvisited
    customers nearest to the current node (legal ones first), and `forced` [R] when given."""
    num_nodes = state.batch.num_nodes
    flat = state.instance * num_nodes + state.current
    distance = state.dist.reshape(-1, num_nodes).index_select(0, flat)  # [R, N] from current
    open_customer = ~state.visited
    open_customer[:, 0] = False
    # Illegal customers rank after every legal one: shift them past the row's longest arc.
    behind = distance.amax(1, keepdim=True) + 1.0
    key = torch.where(legal, distance, distance + behind).masked_fill(~open_customer, torch.inf)
    nearest = key.topk(min(k, num_nodes - 1), dim=1, largest=False).indices
    tokens = torch.zeros_like(open_customer).scatter_(1, nearest, True) & open_customer
    tokens[:, 0] = True
    if forced is not None:
        tokens.scatter_(1, forced[:, None], True)
    return tokens
