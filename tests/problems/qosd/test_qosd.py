"""QoSD problem package: instance checks, exact checker vs brute force, baselines, LP, data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from problems.qosd import (
    EDGE_FUNCTIONS,
    QoSDInstance,
    SyntheticQoSDConfig,
    check_solution,
    edge_weights,
    generate_instance,
    load_gnutella08,
    perturbation_for_weight,
    prune,
    solve_linear_program,
    stress_paths,
)
from problems.qosd.checker import pair_distances

# A diamond 0 -> {1, 2} -> 3 plus a long direct edge 0 -> 3: two two-edge paths (weights 2 each)
DIAMOND = np.array([[0, 0, 1, 2, 0], [1, 2, 3, 3, 3]])


def diamond(threshold: float = 3.0, function: str = "linear", cap=None) -> QoSDInstance:
    cap = np.full(5, 4.0) if cap is None else np.asarray(cap, dtype=float)
    return QoSDInstance(
        num_nodes=4,
        edge_index=DIAMOND,
        alpha=np.array([0.5, 0.5, 0.5, 0.5, 4.0]),
        beta=np.array([0.5, 0.5, 0.5, 0.5, 1.0]),
        cap=cap,
        pairs=np.array([[0, 3]]),
        threshold=threshold,
        edge_function=function,
    )


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


@pytest.mark.parametrize("function", EDGE_FUNCTIONS)
def test_edge_functions_start_at_the_weight_and_invert_exactly(function: str) -> None:
    alpha, beta = np.array([0.3, 1.0]), np.array([0.7, 2.0])
    assert np.allclose(edge_weights(function, alpha, beta, np.zeros(2)), alpha + beta)
    x = np.array([0.25, 3.0])
    weight = edge_weights(function, alpha, beta, x)
    assert np.allclose(perturbation_for_weight(function, alpha, beta, weight), x)
    assert np.all(perturbation_for_weight(function, alpha, beta, alpha) == 0)  # below f(0)
    torch_weight = edge_weights(function, torch.tensor(alpha), torch.tensor(beta), torch.tensor(x))
    assert np.allclose(torch_weight.numpy(), weight)


def test_quadratic_and_log_by_hand() -> None:
    assert edge_weights("quadratic", 1.0, 2.0, 1.0) == pytest.approx(1 + 2 * 4)
    assert edge_weights("log", 1.0, 2.0, np.e - 1) == pytest.approx(1 + 2 * 2)


def test_checker_on_the_diamond_by_hand() -> None:
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
    config = SyntheticQoSDConfig(
        num_nodes=6, edge_probability=0.5, num_pairs=2, edge_function=function
    )
    instance = generate_instance(config, seed)
    x = scale * np.random.default_rng(seed).uniform(0, 1, instance.num_edges) * instance.cap
    distances = pair_distances(instance, x)
    assert np.allclose(check_solution(instance, x).distances, distances)  # both graph builds
    for (source, target), distance in zip(instance.pairs, distances, strict=True):
        assert distance == pytest.approx(brute_force_distance(instance, x, source, target))


def test_bad_instances_are_rejected_with_the_field_named() -> None:
    with pytest.raises(ValueError, match="cap must be >= 0"):
        diamond(cap=[4, 4, -1, 4, 4])
    with pytest.raises(ValueError, match="not attainable within the caps"):
        diamond(threshold=100.0)
    with pytest.raises(ValueError, match="edge_function must be one of"):
        diamond(function="cubic")
    with pytest.raises(ValueError, match="threshold must be"):
        diamond(threshold=-1.0)
    base = dict(
        num_nodes=4,
        alpha=np.ones(2),
        beta=np.ones(2),
        cap=np.ones(2),
        threshold=1.0,
    )
    with pytest.raises(ValueError, match="unreachable"):
        QoSDInstance(edge_index=np.array([[0, 2], [1, 3]]), pairs=np.array([[0, 3]]), **base)
    with pytest.raises(ValueError, match="parallel edges"):
        QoSDInstance(edge_index=np.array([[0, 0], [1, 1]]), pairs=np.array([[0, 1]]), **base)
    with pytest.raises(ValueError, match="self-loops"):
        QoSDInstance(edge_index=np.array([[0, 1], [1, 1]]), pairs=np.array([[0, 1]]), **base)
    with pytest.raises(ValueError, match="beta must be > 0"):
        QoSDInstance(
            edge_index=np.array([[0, 1], [1, 2]]),
            pairs=np.array([[0, 2]]),
            **(base | {"beta": np.array([1.0, 0.0])}),
        )


@given(
    seed=st.integers(0, 10_000),
    function=st.sampled_from(EDGE_FUNCTIONS),
    model=st.sampled_from(["erdos_renyi", "barabasi_albert"]),
    rule=st.sampled_from(["greedy", "random"]),
)
def test_path_stressing_and_pruning_are_feasible_and_pruning_is_minimal(
    seed: int, function: str, model: str, rule: str
) -> None:
    config = SyntheticQoSDConfig(
        graph_model=model, num_nodes=30, edge_probability=0.15, edge_function=function
    )
    instance = generate_instance(config, seed)
    stressed = stress_paths(instance, rule=rule, seed=seed)
    assert check_solution(instance, stressed).feasible
    pruned = prune(instance, stressed)
    assert check_solution(instance, pruned).feasible
    assert np.all(pruned <= stressed)
    # coordinate-wise minimal: lowering any perturbed edge by 1 % of T's weight breaks a pair
    for edge in np.flatnonzero(pruned > 1e-9):
        lowered = pruned.copy()
        weight = instance.weights(pruned[edge : edge + 1], np.array([edge]))
        lowered[edge] = perturbation_for_weight(
            function,
            instance.alpha[edge : edge + 1],
            instance.beta[edge : edge + 1],
            weight - 1e-3 * instance.threshold,
        )[0]
        assert not check_solution(instance, lowered).feasible


def test_path_stressing_continues_from_a_start_and_rejects_bad_ones() -> None:
    instance = diamond()
    start = np.array([2.0, 0.0, 0.0, 0.0, 0.0])  # fixes the upper path only
    x = stress_paths(instance, start=start)
    assert x[0] == 2.0 and check_solution(instance, x).feasible
    with pytest.raises(ValueError, match="start must"):
        stress_paths(instance, start=np.full(5, 9.0))
    with pytest.raises(ValueError, match="rule must be one of"):
        stress_paths(instance, rule="best")
    with pytest.raises(ValueError, match="needs a feasible x"):
        prune(instance, np.zeros(5))


def test_linear_program_on_the_diamond_is_the_hand_optimum() -> None:
    # each two-edge path needs +1 weight = +2 budget (slope 0.5); the direct edge has 5 >= 3
    result = solve_linear_program(diamond())
    assert result.budget == pytest.approx(4.0, abs=1e-8)
    assert check_solution(diamond(), result.x).feasible
    with pytest.raises(ValueError, match="needs edge_function 'linear'"):
        solve_linear_program(diamond(function="log"))


@given(seed=st.integers(0, 10_000), model=st.sampled_from(["erdos_renyi", "barabasi_albert"]))
def test_linear_program_is_a_lower_bound_on_every_heuristic(seed: int, model: str) -> None:
    config = SyntheticQoSDConfig(graph_model=model, num_nodes=40, edge_probability=0.1)
    instance = generate_instance(config, seed)
    optimum = solve_linear_program(instance)
    assert check_solution(instance, optimum.x).feasible
    for rule in ("greedy", "random"):
        heuristic = prune(instance, stress_paths(instance, rule=rule))
        assert optimum.budget <= heuristic.sum() + 1e-7


def test_generated_instances_are_reproducible_and_need_perturbation() -> None:
    config = SyntheticQoSDConfig(num_nodes=50, edge_probability=0.08, edge_function="quadratic")
    first, second = generate_instance(config, 7), generate_instance(config, 7)
    assert np.array_equal(first.edge_index, second.edge_index)
    assert np.array_equal(first.pairs, second.pairs) and first.threshold == second.threshold
    assert np.all(pair_distances(first, np.zeros(first.num_edges)) < first.threshold)
    data = first.to_data()
    assert data.edge_index.shape == (2, first.num_edges) and data.num_nodes == 50
    with pytest.raises(ValueError, match="graph_model must be one of"):
        SyntheticQoSDConfig(graph_model="grid")


def test_gnutella08_loads_and_its_baselines_are_feasible() -> None:
    instance = load_gnutella08("linear")
    assert instance.num_nodes == 6301 and instance.num_edges == 20777
    assert len(instance.pairs) == 10
    unperturbed = instance.weights(np.zeros(instance.num_edges))
    assert np.allclose(unperturbed, instance.alpha + instance.beta)
    optimum = solve_linear_program(instance)
    greedy = prune(instance, stress_paths(instance))
    assert check_solution(instance, greedy).feasible
    assert optimum.budget <= greedy.sum() + 1e-7
    with pytest.raises(ValueError, match="not attainable within the caps"):
        load_gnutella08("log", threshold_factor=1.5)
