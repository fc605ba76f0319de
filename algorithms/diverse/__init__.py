"""DIVERSE (decentralized variance-reduced optimistic gradient with stochastic mini-batch sizes)
for finite-sum convex-concave minimax on torch.distributed: topologies with Metropolis-Hastings
mixing, point-to-point gossip and Chebyshev FastMix, the robust-regression saddle with its exact
solution, GT-EG and centralized OGDA baselines, a simulator and a multi-process launcher."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from algorithms.diverse.centralized_optimistic import CentralizedOptimistic
    from algorithms.diverse.communicator import (
        DenseCommunicator,
        Mixer,
        PeerCommunicator,
        chebyshev_momentum,
    )
    from algorithms.diverse.data import load_compas_regression, split_shards
    from algorithms.diverse.diverse import Diverse
    from algorithms.diverse.gt_extragradient import GradientTrackingExtragradient
    from algorithms.diverse.launch import distributed_run
    from algorithms.diverse.problem import RobustRegression
    from algorithms.diverse.runner import run, simulate
    from algorithms.diverse.saddle import SaddleReference, scalar_saddle, shard_moments
    from algorithms.diverse.sampling import BatchSampler
    from algorithms.diverse.settings import RunSettings
    from algorithms.diverse.topology import Topology, make_topology

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
        "algorithms.diverse.centralized_optimistic": ("CentralizedOptimistic",),
        "algorithms.diverse.communicator": (
            "DenseCommunicator",
            "Mixer",
            "PeerCommunicator",
            "chebyshev_momentum",
        ),
        "algorithms.diverse.data": ("load_compas_regression", "split_shards"),
        "algorithms.diverse.diverse": ("Diverse",),
        "algorithms.diverse.gt_extragradient": ("GradientTrackingExtragradient",),
        "algorithms.diverse.launch": ("distributed_run",),
        "algorithms.diverse.problem": ("RobustRegression",),
        "algorithms.diverse.runner": ("run", "simulate"),
        "algorithms.diverse.saddle": ("SaddleReference", "scalar_saddle", "shard_moments"),
        "algorithms.diverse.sampling": ("BatchSampler",),
        "algorithms.diverse.settings": ("RunSettings",),
        "algorithms.diverse.topology": ("Topology", "make_topology"),
    },
)
