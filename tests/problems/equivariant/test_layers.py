"""Permutation representations, tied layers and the Reynolds projection, against the group itself:
equivariance under random permutations, the subspace dimension from Burnside's lemma, and the
projection against brute-force averaging over all n! permutations."""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.equivariant.permutation_linear import PermutationLinear, reynolds
from optiforge.problems.equivariant.permutation_mlp import PermutationMLP
from optiforge.problems.equivariant.permutation_rep import BLOCKS, PermutationRep, orbit_labels

block_lists = st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=3)


def all_permutations(n: int) -> list[torch.Tensor]:
    return [torch.tensor(p) for p in itertools.permutations(range(n))]


@given(
    n=st.integers(2, 5),
    in_blocks=block_lists,
    hidden_blocks=block_lists,
    out_blocks=block_lists,
    seed=st.integers(0, 2**16),
)
def test_tied_network_is_equivariant(
    n: int, in_blocks: list[str], hidden_blocks: list[str], out_blocks: list[str], seed: int
) -> None:
    """f(P x) = P f(x) for a random permutation, float64, to 1e-10."""
    torch.manual_seed(seed)
    net = PermutationMLP(n, in_blocks, hidden_blocks, out_blocks, tied=True).double()
    perm = torch.randperm(n)
    p_in = net.in_rep.permutation_matrix(perm)
    p_out = net.out_rep.permutation_matrix(perm)
    x = torch.randn(7, net.in_rep.dim, dtype=torch.float64)
    torch.testing.assert_close(net(x @ p_in.T), net(x) @ p_out.T, atol=1e-10, rtol=0)


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("in_block", BLOCKS)
@pytest.mark.parametrize("out_block", BLOCKS)
def test_parameter_count_is_the_equivariant_dimension(
    n: int, in_block: str, out_block: str
) -> None:
    """Tied parameters = dim Hom_G(in, out) = mean over g of fix_in(g) * fix_out(g) (Burnside),
    computed by summing over every permutation."""
    in_rep, out_rep = PermutationRep.of(n, [in_block, "set"]), PermutationRep.of(n, [out_block])
    perms = all_permutations(n)
    burnside = sum(in_rep.fixed_points(g) * out_rep.fixed_points(g) for g in perms) / len(perms)
    layer = PermutationLinear(in_rep, out_rep, tied=True)
    assert layer.weight_values.numel() == burnside
    bias_dim = sum(out_rep.fixed_points(g) for g in perms) / len(perms)
    assert layer.bias_values.numel() == bias_dim


def test_known_dimensions() -> None:
    """Deep Sets: set -> set has 2 parameters (lambda I + gamma 11^T), pairs -> pairs 15 (Bell(4)),
    set -> trivial 1 (sum pooling)."""
    for in_block, out_block, expected in (
        ("set", "set", 2),
        ("pairs", "pairs", 15),
        ("set", "trivial", 1),
    ):
        _, count = orbit_labels(PermutationRep.of(5, [out_block]), PermutationRep.of(5, [in_block]))
        assert count == expected


@pytest.mark.parametrize("blocks", [(["set"], ["pairs"]), (["pairs", "trivial"], ["set", "set"])])
def test_reynolds_equals_group_average(blocks: tuple[list[str], list[str]]) -> None:
    """Orbit means = (1/n!) sum_g P_out(g) W P_in(g)^T over all 24 permutations of S_4; the
    projection is idempotent, fixes tied weights and its residual is orthogonal to them."""
    torch.manual_seed(0)
    in_rep, out_rep = PermutationRep.of(4, blocks[0]), PermutationRep.of(4, blocks[1])
    labels, count = orbit_labels(out_rep, in_rep)
    weight = torch.randn(out_rep.dim, in_rep.dim, dtype=torch.float64)
    perms = all_permutations(4)
    average = sum(
        out_rep.permutation_matrix(g) @ weight @ in_rep.permutation_matrix(g).T for g in perms
    ) / len(perms)
    projected = reynolds(weight, labels, count)
    torch.testing.assert_close(projected, average, atol=1e-12, rtol=0)
    torch.testing.assert_close(reynolds(projected, labels, count), projected, atol=1e-12, rtol=0)
    tied = PermutationLinear(in_rep, out_rep, tied=True).double()
    tied_weight = tied.weight().detach()
    torch.testing.assert_close(reynolds(tied_weight, labels, count), tied_weight)
    residual = weight - projected
    assert abs(float((residual * tied_weight).sum())) < 1e-10


def test_tied_layer_is_its_own_projection_and_free_layer_is_not() -> None:
    """A tied layer is on the equivariant subspace; a free one only after copy_dense."""
    torch.manual_seed(0)
    rep = PermutationRep.of(4, ["set"])
    tied = PermutationLinear(rep, PermutationRep.of(4, ["pairs"]), tied=True)
    free = PermutationLinear(rep, PermutationRep.of(4, ["pairs"]), tied=False)
    assert tied.squared_distance().item() < 1e-12
    assert free.squared_distance().item() > 1e-2
    free.copy_dense(tied.weight().detach(), tied.bias().detach())
    assert free.squared_distance().item() < 1e-12
    with pytest.raises(ValueError, match="copy_dense sets a free layer"):
        tied.copy_dense(tied.weight().detach(), tied.bias().detach())


def test_bad_representations_fail_clearly() -> None:
    """Unknown blocks, n < 2, no blocks or mixed groups raise clear errors."""
    with pytest.raises(ValueError, match=r"unknown representation blocks \['triples'\]; allowed"):
        PermutationRep.of(4, ["set", "triples"])
    with pytest.raises(ValueError, match="n .* must be >= 2"):
        PermutationRep.of(1, ["set"])
    with pytest.raises(ValueError, match="at least one block"):
        PermutationRep.of(4, [])
    with pytest.raises(ValueError, match="different groups"):
        orbit_labels(PermutationRep.of(4, ["set"]), PermutationRep.of(5, ["set"]))
