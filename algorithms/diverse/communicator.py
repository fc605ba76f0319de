"""How node states move between nodes: a dense matmul when one process simulates every node, or
torch.distributed point-to-point messages when each process is one node.

Both hold a block of rows [rows, D] (every node, or this rank's node) and offer the same three
operations, so the algorithms' per-node update code is the same in both settings:
`mix_once` (one gossip round, U <- W U, counted), `average` (an exact all-reduce mean, counted
separately) and `gather` (all rows, for monitoring only, not counted).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from optiforge.algorithms.diverse.topology import Topology


class DenseCommunicator:
    """Every node in one process: rows are all `topology.nodes` nodes; W U is one matmul."""

    def __init__(self, topology: Topology, device: torch.device | str = "cpu") -> None:
        self.topology = topology
        self.weights = topology.weights.to(device)
        self.nodes = list(range(topology.nodes))
        self.rounds = 0
        self.reductions = 0

    def mix_once(self, state: Tensor) -> Tensor:
        """W @ state for the stacked node states [nodes, D]."""
        self.rounds += 1
        return self.weights.to(state.dtype) @ state

    def average(self, state: Tensor) -> Tensor:
        """The mean over nodes, repeated on every row."""
        self.reductions += 1
        return state.mean(dim=0, keepdim=True).expand_as(state).clone()

    def gather(self, state: Tensor) -> Tensor:
        """All node rows (already here)."""
        return state


class PeerCommunicator:
    """This rank is node `dist.get_rank()`; a gossip round sends its row to each graph neighbour
    and receives theirs (isend / irecv), then forms sum_j W_ij u_j in node order."""

    def __init__(self, topology: Topology) -> None:
        if not dist.is_initialized():
            raise ValueError("PeerCommunicator: torch.distributed is not initialized")
        if dist.get_world_size() != topology.nodes:
            raise ValueError(
                f"nodes: the topology has {topology.nodes} nodes but the world size is "
                f"{dist.get_world_size()}; launch one process per node"
            )
        self.topology = topology
        self.rank = dist.get_rank()
        self.nodes = [self.rank]
        self.peers = topology.neighbours(self.rank)
        self.row = topology.weights[self.rank]
        self.rounds = 0
        self.reductions = 0

    def mix_once(self, state: Tensor) -> Tensor:
        """sum_j W_ij u_j over this node and its neighbours ([1, D] in, [1, D] out)."""
        self.rounds += 1
        own = state.contiguous()
        received = {peer: torch.empty_like(own) for peer in self.peers}
        requests = [dist.isend(own, peer) for peer in self.peers]
        requests += [dist.irecv(received[peer], peer) for peer in self.peers]
        for request in requests:
            request.wait()
        received[self.rank] = own
        weights = self.row.to(dtype=state.dtype)
        return sum(weights[j].item() * received[j] for j in sorted(received))

    def average(self, state: Tensor) -> Tensor:
        """The exact mean over all ranks (one all-reduce)."""
        self.reductions += 1
        total = state.clone()
        dist.all_reduce(total)
        return total / self.topology.nodes

    def gather(self, state: Tensor) -> Tensor:
        """Every rank's row, stacked in rank order [nodes, D] (monitoring, not counted)."""
        rows = [torch.empty_like(state) for _ in range(self.topology.nodes)]
        dist.all_gather(rows, state.contiguous())
        return torch.cat(rows)


Communicator = DenseCommunicator | PeerCommunicator


def chebyshev_momentum(lambda2: float) -> float:
    """FastMix's eta_U = (1 - sqrt(1 - lambda2^2)) / (1 + sqrt(1 - lambda2^2))."""
    root = (1.0 - lambda2**2) ** 0.5
    return (1.0 - root) / (1.0 + root)


class Mixer:
    """`rounds` gossip rounds per call; Chebyshev-accelerated (FastMix) or plain W^rounds.

    FastMix: U_{r+1} = (1 + eta_U) W U_r - eta_U U_{r-1}, U_{-1} = U_0. Both keep the node
    average unchanged (W is doubly stochastic), which gradient tracking relies on.
    """

    def __init__(self, communicator: Communicator, rounds: int, accelerated: bool) -> None:
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"mix_rounds: must be an integer >= 1, got {rounds!r}")
        self.communicator = communicator
        self.rounds = rounds
        self.momentum = chebyshev_momentum(communicator.topology.lambda2) if accelerated else 0.0

    def __call__(self, state: Tensor) -> Tensor:
        """`rounds` gossip rounds applied to the held rows `state` [R, D]."""
        previous, current = state, state
        for _ in range(self.rounds):
            mixed = self.communicator.mix_once(current)
            previous, current = current, (1.0 + self.momentum) * mixed - self.momentum * previous
        return current
