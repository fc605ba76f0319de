"""BalanceKV's authors' variant: zero-padded blocks, their cut rule, budgets, weights, bias."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.algorithms.kv_compression import (
    BalanceKV,
    balance_kernel,
    halve,
    halve_authors,
    self_balancing_walk,
    weighted_attention,
)
from optiforge.algorithms.kv_compression.balanced_walk import recursive_halving
from tests.devices import DEVICES


def authors_weights_reference(signs: list[int]) -> tuple[list[int], list[int]]:
    """The authors' procedure on a list: weights +-2 up to the cut c (the later of the first
    positions where each side's count equals n // 2, 0 when never), 1 after it, negated on the
    side of signs[c]; keep the first n // 2 of a stable sort by decreasing weight."""
    n, half = len(signs), len(signs) // 2

    def first(side: int) -> int:
        count = 0
        for i, sign in enumerate(signs):
            count += sign == side
            if count == half:
                return i
        return 0

    c = max(first(1), first(-1))
    flip = -1 if signs[c] == 1 else 1
    weight = [2 * s * flip if i <= c else 1 for i, s in enumerate(signs)]
    order = sorted(range(n), key=lambda i: -weight[i])[:half]  # sorted() is stable
    return order, [weight[i] for i in order]


@settings(max_examples=80, deadline=None)
@given(tail=st.lists(st.sampled_from([1, -1]), min_size=1, max_size=40))
def test_halve_authors_matches_the_authors_procedure(tail: list[int]) -> None:
    """Same kept positions and weights (2 where doubled, else 1) as the transcription above, for
    walks starting at +1 as every walk does; every kept weight is positive."""
    signs = [1, *tail]
    index, doubled = halve_authors(torch.tensor([signs, signs], dtype=torch.float64))
    kept, weights = authors_weights_reference(signs)
    assert index[0].tolist() == kept
    assert [2 if d else 1 for d in doubled[1].tolist()] == weights
    assert min(weights) > 0 and (index.diff(dim=-1) > 0).all()


def test_the_two_cut_rules_by_hand() -> None:
    """+-+- (a tie): the authors drop the side completing last (-) and double both kept; ours drop
    the side completing first (+), keeping 1 doubled and 3 as it is; +++--- likewise (the
    authors double the +, ours keep the - as they are). +++--+: both drop the + up to index 2
    and keep the rest as it is. +-+-+ (odd): the authors cut at 2 of each (index 3) and drop the
    -, ours at 3 + (index 4) and drop the +."""

    def both(signs: list[float]) -> tuple[tuple[list, list], tuple[list, list]]:
        rows = torch.tensor(signs)
        return tuple((i.tolist(), d.tolist()) for i, d in (halve_authors(rows), halve(rows)))

    assert both([1, -1, 1, -1]) == (([0, 2], [True, True]), ([1, 3], [True, False]))
    assert both([1, 1, 1, -1, -1, -1]) == (([0, 1, 2], [True] * 3), ([3, 4, 5], [False] * 3))
    assert both([1, 1, 1, -1, -1, 1]) == (([3, 4, 5], [False, False, False]),) * 2
    assert both([1, -1, 1, -1, 1]) == (([0, 2], [True, True]), ([1, 3], [True, True]))


def test_authors_kernel_pads_with_zero_tokens_by_hand() -> None:
    """Block of 4 with 3 tokens, d = 1, keys 2, 0, 0 and values 1, 1, 0. The authors' zero pad
    joins the mean (1/2): K_01 = e^{(3/2)(-1/2)} (1 + 0.025), K_33 = e^{1/4} 0.025. Ours masks it
    (mean 2/3): K_01 = e^{(4/3)(-2/3)} 1.025, row 3 zero. The variant's walk runs on that kernel."""
    keys = torch.tensor([[2.0], [0.0], [0.0], [0.0]], dtype=torch.float64)
    values = torch.tensor([[1.0], [1.0], [0.0], [0.0]], dtype=torch.float64)
    authors = balance_kernel(keys, values, torch.ones(4, dtype=torch.bool), 1.0, 0.0, 0.025)
    ours = balance_kernel(keys, values, torch.arange(4) < 3, 1.0, 0.0, 0.025)
    assert authors[0, 1].item() == pytest.approx(math.exp(-0.75) * 1.025)
    assert authors[3, 3].item() == pytest.approx(math.exp(0.25) * 0.025)
    assert ours[0, 1].item() == pytest.approx(math.exp(-8 / 9) * 1.025)
    assert ours[3].abs().sum() == 0
    method = BalanceKV(0.5, block_size=4, gamma=0.1, variant="authors")
    signs = method.signs(keys[:3], values[:3], torch.Generator().manual_seed(5))
    uniform = torch.rand((1, 4), generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    assert signs.tolist() == self_balancing_walk(authors, 0.1, uniform[0])[:3].tolist()


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=15, deadline=None)
@given(
    middle=st.integers(16, 300),
    halvings=st.integers(1, 4),
    sinks=st.integers(0, 5),
    window=st.integers(0, 9),
    seed=st.integers(0, 2**16),
)
def test_budget_weights_and_determinism(
    device: str, middle: int, halvings: int, sinks: int, window: int, seed: int
) -> None:
    """sinks + window + middle >> itrs tokens kept; weights are powers 2^j, 0 <= j <= itrs, sinks
    and window weight 1; the same seed gives the same cache, on CPU and CUDA alike."""
    n = sinks + window + middle
    generator = torch.Generator(device).manual_seed(seed)
    keys, values = (torch.randn(2, 3, n, 8, generator=generator, device=device) for _ in "kv")
    method = BalanceKV(0.5**halvings, sinks, window, block_size=32, variant="authors")

    def run() -> tuple[torch.Tensor, torch.Tensor]:
        kept = method.compress(keys, values, generator=torch.Generator(device).manual_seed(seed))
        return kept.positions, kept.log_weights

    positions, log_weights = run()
    assert positions.shape[-1] == sinks + window + (middle >> halvings)
    exponents = log_weights / math.log(2.0)
    assert torch.allclose(exponents, exponents.round(), atol=1e-5)
    assert exponents.min() >= 0 and exponents.max() <= halvings + 1e-5
    assert (log_weights[..., :sinks] == 0).all() and (log_weights[..., n - window :] == 0).all()
    again = run()
    assert torch.equal(positions, again[0]) and torch.equal(log_weights, again[1])


@settings(max_examples=30, deadline=None)
@given(blocks=st.integers(1, 8), halvings=st.integers(1, 4))
def test_balanced_signs_double_every_kept_token(blocks: int, halvings: int) -> None:
    """With alternating signs every halving is a tie: all kept weights are 2^itrs and they sum
    to n, the bias log 2^itrs on every kept token (the authors' decoding bias)."""
    n = blocks * 2**halvings
    keys = torch.zeros(1, n, 2)

    def alternating(kept_keys: torch.Tensor, kept_values: torch.Tensor) -> torch.Tensor:
        return torch.tensor([1.0, -1.0]).repeat(kept_keys.shape[-2] // 2).expand(1, -1)

    index, log_weights = recursive_halving(keys, keys, halvings, alternating, halve_authors)
    assert index.shape[-1] == n >> halvings
    assert torch.allclose(log_weights, torch.full_like(log_weights, halvings * math.log(2.0)))
    assert log_weights.exp().sum().item() == pytest.approx(n)


def test_log_weight_bias_gives_constant_values_exactly() -> None:
    """All values equal c: the attention over the kept tokens with their log-weight bias is c
    (to rounding). Scaling values by w / 2^itrs under a bias of log 2^itrs (the authors' first
    decoding) is not, where the weights differ."""
    generator = torch.Generator().manual_seed(0)
    keys = torch.randn(1, 2, 512, 16, generator=generator)
    constant = torch.tensor([0.5, -2.0, 3.0])
    values = constant.expand(1, 2, 512, 3)
    queries = torch.randn(1, 2, 8, 16, generator=generator)
    kept = BalanceKV(0.25, block_size=64, variant="authors").compress(keys, values, None, generator)
    assert (kept.log_weights.diff(dim=-1) != 0).any()
    out = weighted_attention(queries, kept.keys, kept.values, kept.log_weights)
    assert torch.allclose(out, constant.expand_as(out), atol=1e-6)
    scaled = kept.values * (kept.log_weights.exp() / 4).unsqueeze(-1)
    flat_bias = torch.full_like(kept.log_weights, math.log(4.0))
    assert not torch.allclose(weighted_attention(queries, kept.keys, scaled, flat_bias), out)


def test_bad_variant_names_the_argument() -> None:
    """An unknown variant names `variant` and the allowed values."""
    with pytest.raises(ValueError, match="variant must be one of \\('ours', 'authors'\\)"):
        BalanceKV(0.5, variant="paper")
