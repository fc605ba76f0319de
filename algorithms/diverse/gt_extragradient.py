"""GT-EG: decentralized extragradient with gradient tracking (full local operators).

The baseline DIVERSE is compared with (rows = nodes, W one gossip round or FastMix):

    Z^{k+1/2} = W Z^k - eta S^k
    S^{k+1/2} = W S^k + g(Z^{k+1/2}) - g(Z^k)
    Z^{k+1}   = W Z^k - eta S^{k+1/2}
    S^{k+1}   = W S^{k+1/2} + g(Z^{k+1}) - g(Z^{k+1/2})

W Z^k and W S^k travel in one message, so an iteration costs 2 mixes and 2n oracle calls per
node; the node average of S always equals that of the local operators (tracking).
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.diverse.communicator import Communicator, Mixer
from optiforge.algorithms.diverse.method import NodeMethod
from optiforge.algorithms.diverse.problem import RobustRegression


class GradientTrackingExtragradient(NodeMethod):
    """GT-EG with step size eta; `mix_rounds` / `accelerated` configure each mix."""

    def __init__(
        self,
        problem: RobustRegression,
        features: Tensor,
        targets: Tensor,
        communicator: Communicator,
        step_size: float,
        mix_rounds: int = 1,
        accelerated: bool = False,
    ) -> None:
        super().__init__(problem, features, targets, communicator, step_size)
        self.mix = Mixer(communicator, mix_rounds, accelerated)
        self.operator = self.full_operator(self.z)
        self.tracker = self.operator.clone()

    def step(self) -> None:
        mixed_z, mixed_s = self.mix(torch.cat([self.z, self.tracker], dim=1)).split(
            self.z.shape[1], dim=1
        )
        half = mixed_z - self.step_size * self.tracker
        half_operator = self.full_operator(half)
        half_tracker = mixed_s + half_operator - self.operator
        self.z = mixed_z - self.step_size * half_tracker
        operator = self.full_operator(self.z)
        self.tracker = self.mix(half_tracker) + operator - half_operator
        self.operator = operator
