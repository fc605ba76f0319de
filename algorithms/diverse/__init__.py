"""DIVERSE (decentralized variance-reduced optimistic gradient with stochastic mini-batch sizes)
for finite-sum convex-concave minimax on torch.distributed: topologies with Metropolis-Hastings
mixing, point-to-point gossip and Chebyshev FastMix, the robust-regression saddle with its exact
solution, GT-EG and centralized OGDA baselines, a simulator and a multi-process launcher."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.diverse.centralized_optimistic import CentralizedOptimistic
    from optiforge.algorithms.diverse.communicator import (
        DenseCommunicator,
        Mixer,
        PeerCommunicator,
        chebyshev_momentum,
    )
    from optiforge.algorithms.diverse.data import load_compas_regression, split_shards
    from optiforge.algorithms.diverse.diverse import Diverse
    from optiforge.algorithms.diverse.gt_extragradient import GradientTrackingExtragradient
    from optiforge.algorithms.diverse.launch import distributed_run
    from optiforge.algorithms.diverse.problem import RobustRegression
    from optiforge.algorithms.diverse.runner import run, simulate
    from optiforge.algorithms.diverse.saddle import SaddleReference, scalar_saddle, shard_moments
    from optiforge.algorithms.diverse.sampling import BatchSampler
    from optiforge.algorithms.diverse.settings import RunSettings
    from optiforge.algorithms.diverse.topology import Topology, make_topology

__all__ = [
    "BatchSampler",
    "CentralizedOptimistic",
    "DenseCommunicator",
    "Diverse",
    "GradientTrackingExtragradient",
    "Mixer",
    "PeerCommunicator",
    "RobustRegression",
    "RunSettings",
    "SaddleReference",
    "Topology",
    "chebyshev_momentum",
    "distributed_run",
    "load_compas_regression",
    "make_topology",
    "run",
    "scalar_saddle",
    "shard_moments",
    "simulate",
    "split_shards",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.diverse.centralized_optimistic": ("CentralizedOptimistic",),
        "optiforge.algorithms.diverse.communicator": (
            "DenseCommunicator",
            "Mixer",
            "PeerCommunicator",
            "chebyshev_momentum",
        ),
        "optiforge.algorithms.diverse.data": ("load_compas_regression", "split_shards"),
        "optiforge.algorithms.diverse.diverse": ("Diverse",),
        "optiforge.algorithms.diverse.gt_extragradient": ("GradientTrackingExtragradient",),
        "optiforge.algorithms.diverse.launch": ("distributed_run",),
        "optiforge.algorithms.diverse.problem": ("RobustRegression",),
        "optiforge.algorithms.diverse.runner": ("run", "simulate"),
        "optiforge.algorithms.diverse.saddle": (
            "SaddleReference",
            "scalar_saddle",
            "shard_moments",
        ),
        "optiforge.algorithms.diverse.sampling": ("BatchSampler",),
        "optiforge.algorithms.diverse.settings": ("RunSettings",),
        "optiforge.algorithms.diverse.topology": ("Topology", "make_topology"),
    },
)
