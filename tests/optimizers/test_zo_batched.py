"""Batched telescoping draws: row by row the scalar construction's groups, uniform choices,
exact schedules, zero variance of P4 along a quadratic."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.optimizers.zo_batched import draw
from optiforge.optimizers.zo_estimators import CONSTRUCTIONS, groups
from optiforge.optimizers.zo_schedules import Geometric, Zipf

SCHEDULES = [Geometric(0.2, 0.4), Zipf(0.1, 3.0)]


def row_terms(draws, i: int) -> dict[float, float]:
    """Draw i as {offset: coefficient} over the points it evaluates."""
    terms: dict[float, float] = {}
    pairs = zip(draws.offsets[i].tolist(), draws.coefficients[i].tolist(), strict=True)
    for offset, coefficient in pairs:
        if coefficient != 0:
            terms[offset] = terms.get(offset, 0.0) + coefficient
    return terms


def matching_group(terms: dict[float, float], options: list) -> int | None:
    """Index of the scalar group that, scaled by the number of groups, equals `terms`."""
    for index, group in enumerate(options):
        if sorted(terms) == sorted(offset for offset, _ in group) and all(
            terms[offset] == pytest.approx(len(options) * c, rel=1e-12) for offset, c in group
        ):
            return index
    return None


@pytest.mark.parametrize("construction", list(CONSTRUCTIONS))
@pytest.mark.parametrize("schedule", SCHEDULES, ids=["geo", "zipf"])
def test_each_draw_is_a_scaled_group_of_the_scalar_construction(construction, schedule) -> None:
    """Every batched draw equals len(groups) x one of `groups(construction, schedule, N)`, its
    evaluation count is that group's number of points, and every group gets drawn."""
    draws = draw(construction, schedule, 600, torch.Generator().manual_seed(0))
    seen = set()
    for i in range(600):
        n = int(draws.n[i])
        options = groups(construction, schedule, n)
        index = matching_group(row_terms(draws, i), options)
        assert index is not None, (construction, n, row_terms(draws, i))
        assert int(draws.evaluations()[i]) == len(options[index])
        seen.add((len(options), index))
    assert {index for _, index in seen} == set(range(CONSTRUCTIONS[construction]))


def test_p3_picks_each_branch_half_the_time() -> None:
    """U is uniform: the telescoping branch (3 evaluations) in 1/2 of 20000 draws, +- 5 sigma."""
    draws = draw("P3", Zipf(0.1), 20000, torch.Generator().manual_seed(1))
    share = float((draws.evaluations() == 3).double().mean())
    assert abs(share - 0.5) < 5 * math.sqrt(0.25 / 20000)


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-4, 1.0), st.floats(0.1, 0.9), st.floats(2.1, 5.0))
def test_tensor_schedules_equal_the_scalar_ones(mu: float, ratio: float, exponent: float) -> None:
    """mus / probs on a tensor of n equal mu(n) / prob(n) entry by entry."""
    n = torch.tensor([1, 2, 3, 10, 57])
    for schedule in (Geometric(mu, ratio), Zipf(mu, exponent)):
        for batch, scalar in ((schedule.mus, schedule.mu), (schedule.probs, schedule.prob)):
            expected = torch.tensor([scalar(int(k)) for k in n], dtype=torch.float64)
            torch.testing.assert_close(batch(n), expected, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("schedule", SCHEDULES, ids=["geo", "zipf"])
def test_batched_n_follows_the_schedule(schedule) -> None:
    """Frequencies of N = 1, 2, 3 in 40000 draws match p_1, p_2, p_3 within 5 sigma."""
    n = schedule.sample_batch(40000, torch.Generator().manual_seed(2))
    assert int(n.min()) >= 1
    for k in (1, 2, 3):
        p = schedule.prob(k)
        assert abs(float((n == k).double().mean()) - p) < 5 * math.sqrt(p * (1 - p) / 40000)


def test_p4_draws_are_exact_on_a_quadratic() -> None:
    """Along phi(t) = 2 + 3 t + 5 t^2 every P4 draw is 3 (the optimal pairing, see the docs),
    up to the rounding that the coefficients 1 / (p_N mu_N) amplify for a large N."""
    draws = draw("P4", Zipf(0.2), 500, torch.Generator().manual_seed(3))
    t = draws.offsets
    values = (draws.coefficients * (2.0 + 3.0 * t + 5.0 * t * t)).sum(1)
    torch.testing.assert_close(values, torch.full_like(values, 3.0), rtol=0, atol=1e-6)


def test_unknown_construction_fails_naming_it() -> None:
    """An unknown construction raises a ValueError listing the four."""
    with pytest.raises(ValueError, match=r"^construction must be one of \['P4'"):
        draw("P0", Geometric(), 3, torch.Generator())
