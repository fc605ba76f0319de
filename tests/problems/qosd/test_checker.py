"""problems/qosd/checker.py: exact distances and feasibility vs hand values and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.qosd import (
    EDGE_FUNCTIONS,
    QoSDInstance,
    SyntheticQoSDConfig,
    check_solution,
    generate_instance,
)
from optiforge.problems.qosd.checker import pair_distances
from tests.problems.qosd.instances import diamond


def brute_force_distance(instance: QoSDInstance, x: np.ndarray, source: int, target: int) -> float:
    """Shortest distance by enumerating every simple path (tiny graphs only)."""
    weight = {(u, v): w for u, v, w in zip(*instance.edge_index, instance.weights(x), strict=True)}
    others = [n for n in range(instance.num_nodes) if n not in (source, target)]
    best = np.inf
    for length in range(len(others) + 1):
        for middle in itertools.permutations(others, length):
            nodes = (source, *middle, target)
            steps = list(zip(nodes[:-1], nodes[1:], strict=True))
            if all(step in weight for step in steps):
                best = min(best, sum(weight[step] for step in steps))
    return best


def test_checker_on_the_diamond_by_hand() -> None:
    """Checker on the diamond: distances, budget and feasibility equal the hand values."""
    instance = diamond()
    zero = check_solution(instance, np.zeros(5))
    assert zero.distances[0] == pytest.approx(2.0) and not zero.feasible
    # lifting one edge per path by 1 (linear slope 0.5 -> x = 2) gives both paths length 3
    x = np.array([2.0, 0.0, 0.0, 2.0, 0.0])
    check = check_solution(instance, x)
    assert check.feasible and check.budget == 4.0 and check.distances[0] == pytest.approx(3.0)
    assert not check_solution(instance, np.array([2.0, 0, 0, 1.9, 0])).feasible
    assert not check_solution(instance, np.array([4.5, 0, 0, 2.0, 0])).in_box  # above the cap
    assert not check_solution(instance, np.array([np.nan, 0, 0, 2, 0])).feasible
    assert not check_solution(instance, np.zeros(4)).feasible  # wrong length


@given(
    seed=st.integers(0, 10_000),
    function=st.sampled_from(EDGE_FUNCTIONS),
    scale=st.floats(0.0, 1.0),
)
def test_checker_matches_brute_force_on_tiny_graphs(seed: int, function: str, scale: float) -> None:
    """Checker distances equal brute-force shortest simple paths on tiny random graphs."""
    config = SyntheticQoSDConfig(
        num_nodes=6, edge_probability=0.5, num_pairs=2, edge_function=function
    )
    instance = generate_instance(config, seed)
    x = scale * np.random.default_rng(seed).uniform(0, 1, instance.num_edges) * instance.cap
    distances = pair_distances(instance, x)
    assert np.allclose(check_solution(instance, x).distances, distances)  # both graph builds
    for (source, target), distance in zip(instance.pairs, distances, strict=True):
        assert distance == pytest.approx(brute_force_distance(instance, x, source, target))
