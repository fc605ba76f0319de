"""Gossip keeps the node average, FastMix uses the Chebyshev momentum and contracts faster."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.diverse.communicator import DenseCommunicator, Mixer, chebyshev_momentum
from optiforge.algorithms.diverse.topology import TOPOLOGIES, make_topology


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(TOPOLOGIES),
    nodes=st.integers(1, 10),
    rounds=st.integers(1, 6),
    accelerated=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_mixing_preserves_the_average(
    name: str, nodes: int, rounds: int, accelerated: bool, seed: int
) -> None:
    """(1/m) 1^T Mix(U) = (1/m) 1^T U for any U, plain or Chebyshev, any number of rounds."""
    topology = make_topology(name, nodes, 0.5, seed)
    state = torch.randn(
        nodes, 5, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    )
    communicator = DenseCommunicator(topology)
    mixed = Mixer(communicator, rounds, accelerated)(state)
    torch.testing.assert_close(mixed.mean(0), state.mean(0), rtol=0, atol=1e-12)
    assert communicator.rounds == rounds


def test_chebyshev_recursion_by_hand() -> None:
    """Two FastMix rounds: U1 = (1 + e) W U0 - e U0, U2 = (1 + e) W U1 - e U0, by hand."""
    topology = make_topology("ring", 6)
    weights, eta = topology.weights, chebyshev_momentum(topology.lambda2)
    state = torch.randn(6, 2, dtype=torch.float64)
    first = (1 + eta) * weights @ state - eta * state
    second = (1 + eta) * weights @ first - eta * state
    mixed = Mixer(DenseCommunicator(topology), 2, accelerated=True)(state)
    torch.testing.assert_close(mixed, second, rtol=0, atol=1e-14)
    root = math.sqrt(1 - topology.lambda2**2)
    assert eta == pytest.approx((1 - root) / (1 + root))


def test_fastmix_contracts_faster_than_plain_gossip() -> None:
    """On a 16-ring, 20 Chebyshev rounds leave a tenth of the disagreement of W^20."""
    topology = make_topology("ring", 16)
    state = torch.randn(16, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def spread(accelerated: bool) -> float:
        mixed = Mixer(DenseCommunicator(topology), 20, accelerated)(state)
        return float((mixed - mixed.mean(0)).norm())

    assert spread(True) < 0.1 * spread(False)
    plain = torch.linalg.matrix_power(topology.weights, 8) @ state
    torch.testing.assert_close(
        Mixer(DenseCommunicator(topology), 8, False)(state), plain, rtol=0, atol=1e-13
    )
