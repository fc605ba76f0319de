"""Landscape measurements and hidden-representation distances, against independent references:
autograd on the nn.Module, symmetric criticality on an exactly invariant data set, and
relabelings whose answer is known."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch.nn.functional import mse_loss

from optiforge.lightning_modules.equivariant.hidden_rep import (
    candidate_reps,
    distance_to_rep,
    rep_name,
)
from optiforge.lightning_modules.equivariant.landscape import (
    complement_basis,
    landscape_at,
    subspace_basis,
)
from optiforge.problems.equivariant.permutation_mlp import PermutationMLP


def tied_network(n: int, hidden: list[str], seed: int = 0) -> PermutationMLP:
    torch.manual_seed(seed)
    return PermutationMLP(n, ["set"], hidden, ["trivial"], tied=True).double()


def test_gradient_and_hessian_match_autograd_on_the_module() -> None:
    """landscape_at's gradient norm equals autograd's on the free module at the same point, and
    its Hessian's smallest eigenvalue equals torch.autograd.functional.hessian's."""
    tied = tied_network(3, ["set", "set"])
    free = PermutationMLP(3, ["set"], ["set", "set"], ["trivial"], tied=False).double()
    free.copy_dense_from(tied)
    x, y = torch.randn(64, 3, dtype=torch.float64), torch.randn(64, 1, dtype=torch.float64)
    measured = landscape_at(tied, x, y)
    loss = mse_loss(free(x), y)
    loss.backward()
    gradient = torch.cat([p.grad.reshape(-1) for p in free.dense_parameters()])
    assert measured["grad_norm"] == pytest.approx(float(gradient.norm()), rel=1e-10)
    assert measured["loss"] == pytest.approx(loss.item(), rel=1e-12)
    params = [p.detach() for p in free.dense_parameters()]
    shapes = [p.shape for p in params]

    def flat_loss(flat: torch.Tensor) -> torch.Tensor:
        parts = torch.split(flat, [s.numel() for s in shapes])
        weight1, bias1, weight2, bias2 = (p.reshape(s) for p, s in zip(parts, shapes, strict=True))
        hidden = torch.relu(x @ weight1.T + bias1)
        return ((hidden @ weight2.T + bias2 - y) ** 2).mean()

    hessian = torch.autograd.functional.hessian(
        flat_loss, torch.cat([p.reshape(-1) for p in params])
    )
    assert measured["hessian_min"] == pytest.approx(
        float(torch.linalg.eigvalsh(hessian)[0]), abs=1e-10
    )


def test_symmetric_criticality_on_an_invariant_data_set() -> None:
    """With the data closed under every permutation of S_4 and an equivariant target, the loss is
    invariant under the group acting on the MLP's weights, so at any tied point the gradient has
    no component outside the equivariant subspace (1e-12); on raw samples it has one."""
    net = tied_network(4, ["set", "pairs"])
    teacher = tied_network(4, ["pairs", "set"], seed=1)
    base = torch.randn(16, 4, dtype=torch.float64)
    closed = torch.cat([base[:, list(p)] for p in itertools.permutations(range(4))])
    with torch.no_grad():
        measured = landscape_at(net, closed, teacher(closed))
        raw = landscape_at(net, base, teacher(base))
    assert measured["grad_norm"] > 1e-3
    assert measured["grad_outside_norm"] < 1e-12 * max(1.0, measured["grad_norm"])
    assert raw["grad_outside_norm"] > 1e-4


def test_subspace_basis_is_orthonormal_and_spans_the_tied_network() -> None:
    """The subspace basis is orthonormal, spans the tied net; its complement is orthogonal."""
    net = tied_network(4, ["set", "trivial"])
    basis = subspace_basis(net)
    torch.testing.assert_close(basis.T @ basis, torch.eye(basis.shape[1], dtype=torch.float64))
    point = torch.cat([p.detach().reshape(-1) for p in net.dense_parameters()])
    torch.testing.assert_close(basis @ (basis.T @ point), point)
    complement = complement_basis(basis)
    assert complement.shape[1] == basis.shape[0] - basis.shape[1]
    assert float((complement.T @ basis).abs().max()) < 1e-12


@pytest.mark.parametrize(
    ("n", "hidden"),
    [
        (3, ["set", "set", "trivial", "trivial", "trivial"]),
        (4, ["pairs"]),
        (4, ["pairs", "set", "trivial"]),
        (4, ["set"] * 6),
        (5, ["set"] * 5),
    ],
)
def test_distance_to_rep_finds_relabeled_networks(n: int, hidden: list[str]) -> None:
    """Tied networks with their hidden neurons shuffled are at distance 0 from their
    representation (up to relabeling) and clearly away from another one of the same width."""
    for seed in range(4):
        net = tied_network(n, hidden, seed)
        params = [p.detach() for p in net.dense_parameters()]
        order = torch.randperm(len(params[1]), generator=torch.Generator().manual_seed(seed))
        shuffled = [params[0][order], params[1][order], params[2][:, order], params[3]]
        assert distance_to_rep(shuffled, net.in_rep, net.out_rep, hidden) < 1e-9
        other = ["set"] * (len(params[1]) // n) + ["trivial"] * (len(params[1]) % n)
        if sorted(other) != sorted(hidden):
            assert distance_to_rep(shuffled, net.in_rep, net.out_rep, other) > 1e-2


def test_distance_to_rep_equals_brute_force_over_all_relabelings() -> None:
    """On 5 hidden neurons (120 relabelings) of free networks, the search returns the exact
    minimum of the Reynolds distance over every relabeling."""
    hidden = ["set", "set", "trivial"]
    for seed in range(5):
        torch.manual_seed(seed)
        free = PermutationMLP(2, ["set"], hidden, ["trivial"], tied=False).double()
        params = [p.detach() for p in free.dense_parameters()]
        exact = float("inf")
        for order in itertools.permutations(range(5)):
            relabeled = PermutationMLP(2, ["set"], hidden, ["trivial"], tied=False).double()
            index = list(order)
            relabeled.hidden.copy_dense(params[0][index], params[1][index])
            relabeled.output.copy_dense(params[2][:, index], params[3])
            exact = min(exact, relabeled.squared_distance().item() ** 0.5)
        found = distance_to_rep(params, free.in_rep, free.out_rep, hidden)
        assert found == pytest.approx(exact, rel=1e-9)
    with pytest.raises(ValueError, match="hidden_blocks has dimension 2, the network 5 neurons"):
        distance_to_rep(params, free.in_rep, free.out_rep, ["set"])


def test_candidate_representations_of_a_width() -> None:
    """candidate_reps(4, 16) lists exactly the six block mixes of width 16."""
    names = sorted(rep_name(c) for c in candidate_reps(4, 16))
    assert names == sorted(
        [
            "1 pairs",
            "4 set",
            "3 set + 4 trivial",
            "2 set + 8 trivial",
            "1 set + 12 trivial",
            "16 trivial",
        ]
    )
