"""The evaluation batch of VRP: instances with their reference cost, shared by data and models.

A datamodule yields it, every model's evaluation reads it; it lives here, below both, so that
neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from optiforge.problems.vrp.instance import VRPBatch


@dataclass(frozen=True)
class VRPEvalBatch:
    """Evaluation instances with their reference.

    Attributes:
        instances: the instances [B] in model units.
        reference_cost: PyVRP cost (generated sets) or BKS / scale (CVRPLIB) [B]; NaN if none.
        scale: instance units per model unit [B] (1 for generated instances).
        name: "CVRP/n20" for a generated set, "CVRP/X-n101-k25" for a CVRPLIB instance.
    """

    instances: VRPBatch
    reference_cost: torch.Tensor
    scale: torch.Tensor
    name: str

    def to(self, device: torch.device | str) -> VRPEvalBatch:
        return VRPEvalBatch(
            self.instances.to(device),
            self.reference_cost.to(device),
            self.scale.to(device),
            self.name,
        )

    def index(self, rows: slice) -> VRPEvalBatch:
        """The rows `rows` of this set, under the same name."""
        return VRPEvalBatch(
            self.instances.index(rows), self.reference_cost[rows], self.scale[rows], self.name
        )
