"""What the three compared methods share: node rows, shards, step size and oracle counting.

A method holds the rows of the nodes its process runs (every node in a simulation, one node per
rank in a distributed run): iterates `z` [R, 2d] and each node's count of per-sample operator
evaluations g_ij (the paper's local incremental first-order oracle calls).
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.diverse.communicator import Communicator
from optiforge.algorithms.diverse.problem import RobustRegression


class NodeMethod:
    """Base of the methods: `step()` advances every held node by one iteration."""

    def __init__(
        self,
        problem: RobustRegression,
        features: Tensor,
        targets: Tensor,
        communicator: Communicator,
        step_size: float,
    ) -> None:
        if not step_size > 0.0:
            raise ValueError(f"step_size: must be > 0, got {step_size}")
        if features.ndim != 3 or targets.shape != features.shape[:2]:
            raise ValueError(
                "features/targets: expected shards [R, n, d] and [R, n], got "
                f"{tuple(features.shape)} and {tuple(targets.shape)}"
            )
        if features.shape[0] != len(communicator.nodes):
            raise ValueError(
                f"features: {features.shape[0]} shards for {len(communicator.nodes)} held nodes"
            )
        self.problem = problem
        self.features = features
        self.targets = targets
        self.communicator = communicator
        self.step_size = step_size
        rows, _, dim = features.shape
        self.z = torch.zeros(rows, 2 * dim, dtype=features.dtype, device=features.device)
        self.evaluations = torch.zeros(rows, dtype=torch.float64)

    @property
    def shard_size(self) -> int:
        """n, the samples each node holds."""
        return self.features.shape[1]

    def full_operator(self, z: Tensor) -> Tensor:
        """Each node's full local operator at its row of `z` (n oracle calls per node)."""
        self.evaluations += self.shard_size
        return self.problem.local_operator(z, self.features, self.targets)

    def step(self) -> None:
        """One iteration of the method on every held node."""
        raise NotImplementedError
