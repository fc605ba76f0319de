"""Morph and Refine: smooth reward by hand, VAE/energy losses fall on a toy set, Refine's
answers are always feasible, and the phases chain through saved weights."""

from __future__ import annotations

import lightning as L
import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.datamodules.qosd import QoSDDataModule
from optiforge.lightning_modules.hephaestus import Forge
from optiforge.lightning_modules.hephaestus.differentiable_reward import PathPool, smooth_reward
from optiforge.lightning_modules.hephaestus.morph import Morph
from optiforge.lightning_modules.hephaestus.refine import Refine
from optiforge.problems.qosd import QoSDInstance, check_solution

SIZES = {"forge_hidden": 16, "forge_layers": 1, "latent": 4, "components": 2, "hidden": 16}


def toy_data(**overrides) -> QoSDDataModule:
    settings = dict(
        num_nodes=30, edge_probability=0.15, train_size=8, val_size=2, test_size=3, batch_size=4
    )
    return QoSDDataModule(**(settings | overrides))


def test_smooth_reward_by_hand_on_a_two_path_graph() -> None:
    """The smooth reward on a two-path graph equals its hand-computed value."""
    # 0 -> 1 -> 3 (weights 1 + 1) and 0 -> 2 -> 3 (weights 1.5 + 1.5), T = 4, linear slope 1
    instance = QoSDInstance(
        num_nodes=4,
        edge_index=np.array([[0, 1, 0, 2], [1, 3, 2, 3]]),
        alpha=np.array([0.0, 0.0, 0.5, 0.5]),
        beta=np.ones(4),
        cap=np.full(4, 5.0),
        pairs=np.array([[0, 3]]),
        threshold=4.0,
    )
    pool = PathPool(instance)
    pool.add_shortest_paths(np.zeros(4))
    pool.add_shortest_paths(np.array([3.0, 0.0, 0.0, 0.0]))  # now the lower path is shortest
    assert sorted(len(p) for p in pool.paths[0]) == [2, 2] and len(pool.paths[0]) == 2
    x = torch.tensor([[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.5, 0.5]], requires_grad=True)
    tau = 1e-4
    reward = smooth_reward(pool, x, penalty=10.0, temperature=tau)
    # row 0: paths 3 and 3 (units of T: 0.75) -> violation 0.25; budget 1/4
    # row 1: paths 4 and 4 -> violation ~ tau log 2 (the softmin of two equal lengths)
    expected_0 = -(1 / 4 + 10 * 0.25)
    assert reward[0].item() == pytest.approx(expected_0, abs=1e-3)
    assert reward[1].item() == pytest.approx(-(3 / 4), abs=1e-2)
    reward[0].backward()
    # raising an edge of a violated path pays penalty/T per unit, minus budget 1/T
    grad = x.grad[0].numpy()
    assert grad[0] == pytest.approx(-0.25 + 10 * 0.25 * 0.5, abs=1e-2)


def test_morph_losses_fall_on_a_toy_set(tmp_path) -> None:
    """15 epochs cut Morph's energy loss by half and lower its VAE loss."""
    L.seed_everything(0)
    data = toy_data()
    morph = Morph(**SIZES, samples_per_instance=3, num_test_samples=2, lr=3e-3)
    data.setup("fit")
    batch = Batch.from_data_list(data.graphs["train"])
    with torch.no_grad():
        before = morph.losses(batch)
    quiet_trainer(15, tmp_path).fit(morph, datamodule=data)
    with torch.no_grad():
        after = morph.losses(batch)
    assert after["energy"] < 0.5 * before["energy"]
    assert after["vae"] < before["vae"]


def test_refine_answers_are_feasible_and_never_worse_than_morph_or_forge(
    tmp_path, device: str
) -> None:
    """The three phases train and solve on each device: Refine's answers pass the exact checker
    and are never above Morph's, which are never above Forge's."""
    L.seed_everything(0)
    data = toy_data()
    forge = Forge(hidden=16, num_layers=1)
    quiet_trainer(3, tmp_path, device).fit(forge, datamodule=data)
    forge_path = tmp_path / "forge.pt"
    torch.save(forge.state_dict(), forge_path)
    morph = Morph(str(forge_path), **SIZES, samples_per_instance=3, num_test_samples=2)
    quiet_trainer(2, tmp_path, device).fit(morph, datamodule=data)
    morph_path = tmp_path / "morph.pt"
    torch.save({"state_dict": morph.state_dict()}, morph_path)  # checkpoint layout
    refine = Refine(str(morph_path), **SIZES, samples=2, search_particles=3, search_steps=4)
    assert torch.equal(
        refine.morph.forge.gnn.edge_out[0].weight, forge.gnn.edge_out[0].weight
    )  # the chain loaded the trained weights
    quiet_trainer(2, tmp_path, device).fit(refine, datamodule=data)
    data.setup("test")
    batch = Batch.from_data_list(data.graphs["test"]).to(device)
    for phase in (forge, morph, refine):
        phase.to(device)
    solvers = zip(
        batch.instance,
        forge.solvers(batch),
        morph.solvers(batch),
        refine.solvers(batch),
        strict=True,
    )
    for instance, forge_solve, morph_solve, refine_solve in solvers:
        greedy = np.zeros(instance.num_edges) + instance.cap  # feasible: caps reach T
        x_forge, x_morph, x_refine = forge_solve(greedy), morph_solve(greedy), refine_solve(greedy)
        assert check_solution(instance, x_refine).feasible
        assert x_refine.sum() <= x_morph.sum() + 1e-9 <= x_forge.sum() + 2e-9


def test_bad_arguments_are_rejected() -> None:
    """Out-of-range phase arguments are refused by name."""
    with pytest.raises(ValueError, match="samples_per_instance must be >= 2"):
        Morph(**SIZES, samples_per_instance=1)
    with pytest.raises(ValueError, match="search_steps must be a positive integer"):
        Refine(**SIZES, search_steps=0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        Refine(**SIZES, temperature=0.0)
    with pytest.raises(ValueError, match="descent_steps must be a non-negative integer"):
        Refine(**SIZES, descent_steps=-1)
