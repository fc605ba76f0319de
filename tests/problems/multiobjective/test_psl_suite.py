"""The rotated PSL suite: known fronts, the front as a lower bound, and refused input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.multiobjective import PARETO_SETS, RotatedPSLProblem, non_dominated


@pytest.mark.parametrize("name", sorted(PARETO_SETS))
@pytest.mark.parametrize("dim", [4, 32, 256])
def test_pareto_set_maps_onto_the_analytic_front(name: str, dim: int) -> None:
    """Pareto-set points are in the box, mutually non-dominated, and satisfy the front equation."""
    problem = RotatedPSLProblem(name, dim)
    x = problem.pareto_set(100)
    f = problem.evaluate(x)
    assert not problem.outside(x).any()
    assert non_dominated(f).all()
    assert torch.allclose(problem.front_residual(f), torch.zeros(len(f), dtype=f.dtype), atol=1e-12)
    assert torch.allclose(f.min(0).values, problem.known_ideal(), atol=1e-12)


def test_two_objective_front_values_by_hand() -> None:
    """At x1 = 1/4 on the Pareto set psl1's objectives are (1/4, 1 - 1/2)."""
    problem = RotatedPSLProblem("psl1", 8)
    x = problem.pareto_set(5)[1:2]  # x1 = 0.25
    assert torch.allclose(problem.evaluate(x), torch.tensor([[0.25, 0.5]], dtype=torch.float64))


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(PARETO_SETS)),
    dim=st.integers(3, 40),
    seed=st.integers(0, 2**31 - 1),
)
def test_front_bounds_every_point_of_the_box(name: str, dim: int, seed: int) -> None:
    """For random in-box points the front residual is >= 0: nothing lies beyond the front."""
    problem = RotatedPSLProblem(name, dim, seed=seed % 7)
    lower, upper = problem.lower, problem.upper
    u = torch.rand(64, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    f = problem.evaluate(lower + (upper - lower) * u)
    assert (problem.front_residual(f) >= -1e-12).all()
    assert (f >= problem.known_ideal()).all()


def test_distance_variables_are_coupled_through_the_rotation() -> None:
    """Moving one distance variable off the set raises every objective (non-separable)."""
    problem = RotatedPSLProblem("psl5", 16)
    x = problem.pareto_set(9)[4:5].clone()
    base = problem.evaluate(x)
    x[0, 5] += 0.1
    assert (problem.evaluate(x) > base).all()


def test_bad_input_is_refused_by_name() -> None:
    """Unknown names, a dimension below the objective count, wrong shapes and out-of-box points
    raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="name must be one of"):
        RotatedPSLProblem("psl10", 8)
    with pytest.raises(ValueError, match="dim must be >= num_obj = 3"):
        RotatedPSLProblem("psl5", 2)
    problem = RotatedPSLProblem("psl1", 4)
    with pytest.raises(ValueError, match=r"x must have shape \[n, 4\]"):
        problem.evaluate(torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="x: points outside the box"):
        problem.evaluate(torch.full((1, 4), 1.5, dtype=torch.float64))
