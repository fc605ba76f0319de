"""ZDT and DTLZ: analytic fronts and values by hand."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.multiobjective import DTLZ, ZDT, make_problem, non_dominated


@pytest.mark.parametrize(
    "problem", [ZDT("zdt1", 10), ZDT("zdt2", 10), DTLZ("dtlz1", 7), DTLZ("dtlz2", 12, 4)]
)
def test_pareto_set_maps_onto_the_analytic_front(problem: ZDT | DTLZ) -> None:
    """Pareto-set points are mutually non-dominated and satisfy the front equation."""
    f = problem.evaluate(problem.pareto_set(60))
    assert non_dominated(f).all()
    assert problem.front_residual(f).abs().max() < 1e-12


def test_values_by_hand() -> None:
    """ZDT1 at (1/4, 1/2, ...): g = 5.5, f2 = g (1 - sqrt(1/22)); DTLZ2 at its centre."""
    x = torch.tensor([[0.25] + [0.5] * 9], dtype=torch.float64)
    g = 1 + 9 * 0.5
    expected = torch.tensor([[0.25, g * (1 - (0.25 / g) ** 0.5)]], dtype=torch.float64)
    assert torch.allclose(ZDT("zdt1", 10).evaluate(x), expected)
    centre = torch.full((1, 5), 0.5, dtype=torch.float64)
    half = 2**-0.5
    expected = torch.tensor([[0.5, 0.5, half]], dtype=torch.float64)
    assert torch.allclose(DTLZ("dtlz2", 5, 3).evaluate(centre), expected)


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(["zdt1", "zdt2", "dtlz1", "dtlz2"]), seed=st.integers(0, 10**6))
def test_front_bounds_random_points(name: str, seed: int) -> None:
    """Random points of the unit box have front residual >= 0."""
    problem = make_problem(name, 9)
    x = torch.rand(50, 9, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    assert (problem.front_residual(problem.evaluate(x)) >= -1e-12).all()


def test_bad_names_and_dimensions_are_refused() -> None:
    """Unknown names and dim < num_obj raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="name must be one of"):
        make_problem("zdt9", 5)
    with pytest.raises(ValueError, match="dim must be >= num_obj = 4"):
        DTLZ("dtlz2", 3, 4)
