"""The self-balancing walk keeps its signed sums small; `halve` keeps half by the stated rule."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.kv_compression import balance_kernel, halve, self_balancing_walk


@settings(max_examples=20, deadline=None)
@given(tokens=st.integers(256, 1024), dim=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_walk_prefix_sums_stay_within_the_logarithmic_bound(
    tokens: int, dim: int, seed: int
) -> None:
    """Unit vectors u_t, kernel <u_i, u_j>, gamma = 1/2: every prefix sum sum_{j<=t} s_j u_j has
    sup-norm <= 1 + ln(dim * tokens) (Alweiss-Liu-Sawhney: O(log(dT/delta))), where random
    signs wander like sqrt(t) (about 16 or more at t = 256)."""
    generator = torch.Generator().manual_seed(seed)
    vectors = torch.randn(tokens, dim, generator=generator, dtype=torch.float64)
    vectors = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True)
    uniform = torch.rand(tokens, generator=generator, dtype=torch.float64)
    signs = self_balancing_walk(vectors @ vectors.T, 0.5, uniform)
    assert set(signs.tolist()) <= {-1.0, 1.0} and signs[0] == 1.0
    prefix = (signs.unsqueeze(-1) * vectors).cumsum(0)
    assert prefix.abs().max().item() <= 1.0 + math.log(dim * tokens)


def test_walk_with_zero_gamma_is_a_fair_coin() -> None:
    """gamma = 0: s_i = +1 exactly where the uniform is below 1/2 (after the first, +1)."""
    uniform = torch.tensor([0.9, 0.2, 0.7, 0.49, 0.51])
    signs = self_balancing_walk(torch.ones(5, 5), 0.0, uniform)
    assert signs.tolist() == [1.0, 1.0, -1.0, 1.0, -1.0]


def test_walk_sign_follows_the_field_by_hand() -> None:
    """Kernel [[1, 2], [2, 1]], gamma 1: p_1 = 1/2 - 2 < 0, so s_1 = -1 whatever the uniform."""
    signs = self_balancing_walk(torch.tensor([[1.0, 2.0], [2.0, 1.0]]), 1.0, torch.zeros(2))
    assert signs.tolist() == [1.0, -1.0]


def reference_halve(signs: list[float]) -> tuple[list[int], list[bool]]:
    """Loop version of the rule: the side whose ceil(n/2)-th member comes first loses its
    members up to there; the rest is kept, doubled before that point."""
    n, need = len(signs), len(signs) - len(signs) // 2
    counts = {1.0: 0, -1.0: 0}
    cut, dropped = 0, 1.0
    for cut, sign in enumerate(signs):  # noqa: B007 (cut is read after the loop)
        counts[sign] += 1
        if counts[sign] == need:
            dropped = sign
            break
    kept = [i for i in range(n) if not (i <= cut and signs[i] == dropped)]
    return kept, [i <= cut for i in kept]


@settings(max_examples=60, deadline=None)
@given(signs=st.lists(st.sampled_from([1.0, -1.0]), min_size=1, max_size=40))
def test_halve_matches_the_loop_reference(signs: list[float]) -> None:
    """`halve` keeps n // 2 increasing positions, doubled before the cut, as the loop does."""
    index, doubled = halve(torch.tensor([signs, signs]))
    kept, kept_doubled = reference_halve(signs)
    assert index[1].tolist() == kept and doubled[1].tolist() == kept_doubled
    assert len(kept) == len(signs) // 2


def test_kernel_of_a_hand_computed_block() -> None:
    """Keys (1, 0), (-1, 0) centre to themselves; d = 2: K_01 = e^{-1/sqrt 2} (<v0,v1> + 0.5);
    a padded third token gets zero rows and columns."""
    keys = torch.tensor([[[1.0, 0.0], [-1.0, 0.0], [7.0, 7.0]]])
    values = torch.tensor([[[1.0, 0.0], [2.0, 0.0], [1.0, 1.0]]])
    valid = torch.tensor([[True, True, False]])
    kernel = balance_kernel(keys, values, valid, 1.0, 0.0, 0.5)[0]
    assert torch.allclose(kernel[0, 1], math.exp(-1 / math.sqrt(2)) * torch.tensor(2.5))
    assert torch.allclose(kernel[0, 0], math.exp(1 / math.sqrt(2)) * torch.tensor(1.5))
    assert kernel[2].abs().sum() == 0 and kernel[:, 2].abs().sum() == 0
