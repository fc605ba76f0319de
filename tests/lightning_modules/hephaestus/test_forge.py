"""Forge: PPS guarantee, GNN shapes/permutation behaviour, datamodule labels, a short fit."""

from __future__ import annotations

import lightning as L
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch_geometric.data import Batch

from optiforge.datamodules.qosd import QoSDDataModule, instance_graph
from optiforge.lightning_modules.hephaestus import EdgeStressGNN, Forge, predictive_path_stressing
from optiforge.problems.qosd import (
    SyntheticQoSDConfig,
    check_solution,
    generate_instance,
    prune,
    solve_linear_program,
    stress_paths,
)
from optiforge.problems.qosd.classical_best import classical_best


@given(
    seed=st.integers(0, 5_000),
    function=st.sampled_from(["linear", "quadratic", "log"]),
    stress_kind=st.sampled_from(["zeros", "ones", "random"]),
)
def test_pps_is_feasible_minimal_and_never_worse_than_greedy(
    seed: int, function: str, stress_kind: str
) -> None:
    """Predictive path stressing is feasible, already pruned, and never above greedy."""
    config = SyntheticQoSDConfig(num_nodes=40, edge_probability=0.1, edge_function=function)
    instance = generate_instance(config, seed)
    stress = {
        "zeros": np.zeros(instance.num_edges),
        "ones": np.ones(instance.num_edges),
        "random": np.random.default_rng(seed).uniform(size=instance.num_edges),
    }[stress_kind]
    x = predictive_path_stressing(instance, stress)
    assert check_solution(instance, x).feasible
    greedy = prune(instance, stress_paths(instance))
    assert x.sum() <= greedy.sum() + 1e-9
    assert np.allclose(prune(instance, x), x)  # already minimal: pruning changes nothing


def test_pps_with_the_optimal_stress_returns_an_optimal_budget() -> None:
    """PPS given the LP optimum as stress returns the LP optimal budget."""
    instance = generate_instance(SyntheticQoSDConfig(num_nodes=60, edge_probability=0.08), 3)
    optimum = solve_linear_program(instance)
    stress = np.divide(
        optimum.x, instance.cap, out=np.zeros(instance.num_edges), where=instance.cap > 0
    )
    x = predictive_path_stressing(instance, stress)
    assert x.sum() == pytest.approx(optimum.budget, rel=1e-6)


def test_pps_rejects_bad_stress() -> None:
    """PPS rejects stress above 1 and stress of the wrong length."""
    instance = generate_instance(SyntheticQoSDConfig(num_nodes=30, edge_probability=0.15), 0)
    with pytest.raises(ValueError, match="stress must have shape"):
        predictive_path_stressing(instance, np.full(instance.num_edges, 1.5))
    with pytest.raises(ValueError, match="stress must have shape"):
        predictive_path_stressing(instance, np.zeros(3))


def test_gnn_is_equivariant_to_node_relabeling() -> None:
    """GNN logits follow a node relabeling and edge reordering; the embedding is unchanged."""
    instance = generate_instance(SyntheticQoSDConfig(num_nodes=30, edge_probability=0.15), 1)
    graph = instance_graph(instance, labelled=False)
    torch.manual_seed(0)
    gnn = EdgeStressGNN(hidden=16, num_layers=2).eval()
    batch = torch.zeros(graph.num_nodes, dtype=torch.long)
    logits, _, embedding = gnn(graph.x, graph.edge_index, graph.edge_attr, batch)
    relabel = torch.randperm(graph.num_nodes, generator=torch.Generator().manual_seed(0))
    inverse = torch.argsort(relabel)  # new id of old node i is inverse[i]
    edge_order = torch.randperm(graph.num_edges, generator=torch.Generator().manual_seed(1))
    logits2, _, embedding2 = gnn(
        graph.x[relabel],
        inverse[graph.edge_index][:, edge_order],
        graph.edge_attr[edge_order],
        batch,
    )
    assert torch.allclose(logits2, logits[edge_order], atol=1e-5)
    assert torch.allclose(embedding2, embedding, atol=1e-5)


def test_datamodule_labels_are_the_classical_best_and_splits_differ() -> None:
    """Labels are classical_best / cap, train and val pairs differ, bad sizes raise."""
    data = QoSDDataModule(
        num_nodes=30, edge_probability=0.15, train_size=3, val_size=2, test_size=2
    )
    data.setup("fit")
    graph = data.graphs["train"][0]
    best = classical_best(graph.instance)
    assert np.allclose(graph.stress.double().numpy() * graph.instance.cap, best, atol=1e-5)
    train_pairs = {tuple(g.instance.pairs.ravel()) for g in data.graphs["train"]}
    val_pairs = {tuple(g.instance.pairs.ravel()) for g in data.graphs["val"]}
    assert not train_pairs & val_pairs
    batch = Batch.from_data_list(data.graphs["train"])
    assert len(batch.instance) == 3 and batch.edge_attr.shape[1] == 9
    with pytest.raises(ValueError, match="train_size must be a positive integer"):
        QoSDDataModule(train_size=0)


@pytest.mark.slow
def test_forge_learns_and_its_test_solutions_are_feasible(tmp_path) -> None:
    """A short Forge fit cuts the loss by over 20% and its test solutions are feasible."""
    L.seed_everything(0)
    data = QoSDDataModule(
        num_nodes=40, edge_probability=0.1, train_size=48, val_size=8, test_size=8, batch_size=8
    )
    model = Forge(hidden=32, num_layers=2, lr=3e-3)
    trainer = L.Trainer(
        max_epochs=8,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        default_root_dir=tmp_path,
    )
    data.setup("fit")
    batch = Batch.from_data_list(data.graphs["train"])
    with torch.no_grad():
        before = float(model.loss(batch))
    trainer.fit(model, datamodule=data)
    with torch.no_grad():
        after = float(model.loss(batch))
    assert after < 0.8 * before
    (metrics,) = trainer.test(model, datamodule=data, verbose=False)
    assert metrics["test/feasible"] == 1.0
    assert metrics["test/budget_ratio_greedy"] <= 1.0 + 1e-9
    assert metrics["test/budget_ratio_lp"] >= 1.0 - 1e-6  # the LP is a lower bound
