"""Mixing matrices are symmetric, doubly stochastic and supported exactly on the graph."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.diverse.topology import TOPOLOGIES, make_topology, torus_shape


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(TOPOLOGIES),
    nodes=st.integers(1, 16),
    probability=st.floats(0.3, 1.0),
    seed=st.integers(0, 100),
)
def test_weights_are_doubly_stochastic_on_the_graph(
    name: str, nodes: int, probability: float, seed: int
) -> None:
    """W = W^T >= 0, rows and columns sum to 1, W_ij > 0 iff i = j or {i, j} is an edge."""
    topology = make_topology(name, nodes, probability, seed)
    weights, adjacency = topology.weights, topology.adjacency
    assert torch.equal(adjacency, adjacency.T) and not adjacency.diagonal().any()
    torch.testing.assert_close(weights, weights.T, rtol=0, atol=0)
    ones = torch.ones(nodes, dtype=torch.float64)
    torch.testing.assert_close(weights @ ones, ones, rtol=0, atol=1e-12)
    torch.testing.assert_close(ones @ weights, ones, rtol=0, atol=1e-12)
    support = adjacency | torch.eye(nodes, dtype=torch.bool)
    assert torch.equal(weights > 0, support)
    assert topology.lambda2 < 1.0 - 1e-9 or nodes == 1  # connected: gossip contracts


def test_ring_and_torus_neighbours() -> None:
    """Ring: i +- 1; 2 x 4 torus: 3 neighbours (the two row neighbours coincide); 3 x 3: 4."""
    ring = make_topology("ring", 6)
    assert ring.neighbours(0) == [1, 5] and ring.neighbours(3) == [2, 4]
    assert torus_shape(8) == (2, 4) and torus_shape(9) == (3, 3)
    assert make_topology("torus", 8).neighbours(0) == [1, 3, 4]
    assert make_topology("torus", 9).neighbours(4) == [1, 3, 5, 7]
    two = make_topology("ring", 2)
    torch.testing.assert_close(two.weights, torch.full((2, 2), 0.5, dtype=torch.float64))
    assert two.lambda2 == pytest.approx(0.0, abs=1e-12)


def test_metropolis_hastings_ring_spectrum() -> None:
    """A ring's MH matrix is circulant (1/3, 1/3, 1/3): lambda2 = 1/3 + 2/3 cos(2 pi / m)."""
    for nodes in (5, 8, 12):
        expected = 1 / 3 + 2 / 3 * math.cos(2 * math.pi / nodes)
        assert make_topology("ring", nodes).lambda2 == pytest.approx(expected, abs=1e-12)


def test_erdos_renyi_is_connected_and_seeded() -> None:
    """The same seed gives the same connected graph; p = 1 gives the complete graph."""
    a, b = make_topology("erdos_renyi", 10, 0.3, seed=4), make_topology("erdos_renyi", 10, 0.3, 4)
    assert torch.equal(a.adjacency, b.adjacency)
    complete = make_topology("erdos_renyi", 5, 1.0)
    assert int(complete.adjacency.sum()) == 20
    torch.testing.assert_close(complete.weights, torch.full((5, 5), 0.2, dtype=torch.float64))
