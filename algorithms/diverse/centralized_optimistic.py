"""Centralized optimistic gradient (OGDA) with an all-reduce: the communication-heavy reference.

Every node keeps the same iterate; each iteration all-reduces the nodes' full local operators
into the exact global operator G^k = g(z^k) and steps

    z^{k+1} = z^k - eta ((1 + alpha) G^k - alpha G^{k-1}),

so an iteration costs one all-reduce (counted in `communicator.reductions`, not as a gossip
round) and n oracle calls per node.
"""

from __future__ import annotations

from torch import Tensor

from optiforge.algorithms.diverse.communicator import Communicator
from optiforge.algorithms.diverse.method import NodeMethod
from optiforge.algorithms.diverse.problem import RobustRegression


class CentralizedOptimistic(NodeMethod):
    """All-reduce OGDA with step size eta and optimism weight `alpha` (1 is classical OGDA)."""

    def __init__(
        self,
        problem: RobustRegression,
        features: Tensor,
        targets: Tensor,
        communicator: Communicator,
        step_size: float,
        alpha: float = 1.0,
    ) -> None:
        super().__init__(problem, features, targets, communicator, step_size)
        if not alpha >= 0.0:
            raise ValueError(f"alpha: must be >= 0, got {alpha}")
        self.alpha = alpha
        self.operator = self.global_operator()
        self.previous_operator = self.operator

    def global_operator(self) -> Tensor:
        """g(z^k) on every node: the all-reduced mean of the local operators."""
        return self.communicator.average(self.full_operator(self.z))

    def step(self) -> None:
        direction = (1.0 + self.alpha) * self.operator - self.alpha * self.previous_operator
        self.z = self.z - self.step_size * direction
        self.previous_operator, self.operator = self.operator, self.global_operator()
