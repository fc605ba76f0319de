"""Tests for the constrained problem families: feasibility by construction, values, gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from optiforge.problems.constrained import FAMILIES, ConstrainedFamily, make_family
from optiforge.problems.constrained.family import NORM_WEIGHT
from optiforge.problems.constrained.generation import FSNET_BOX_BOUND, family_rng, linear_bound
from optiforge.problems.constrained.second_order_cone import SOC_MARGIN

SMALL = {"num_vars": 10, "num_eq": 5, "num_ineq": 5}
NAMES = sorted(FAMILIES)
ROUNDING = 1e-12


def small_family(name: str, seed: int = 3, **sizes: int) -> ConstrainedFamily:
    return make_family(name, **{**SMALL, **sizes}, seed=seed)


def same_data(first: ConstrainedFamily, second: ConstrainedFamily) -> bool:
    first_arrays, second_arrays = first.arrays(), second.arrays()
    return first_arrays.keys() == second_arrays.keys() and all(
        np.array_equal(first_arrays[key], second_arrays[key]) for key in first_arrays
    )


@st.composite
def family_and_parameters(draw: st.DrawFn, name: str) -> tuple[ConstrainedFamily, torch.Tensor]:
    """A family of random small sizes and seed, and x inside the box or on its vertices."""
    num_vars = draw(st.integers(3, 12))
    num_eq = draw(st.integers(1, num_vars - 1))
    num_ineq = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    try:
        family = make_family(name, num_vars, num_eq, num_ineq, seed)
    except ValueError as error:  # the documented refusal of a box that cannot hold A^+ x
        assert "box_bound" in str(error)
        assume(False)
    values = st.floats(-1.0, 1.0) if draw(st.booleans()) else st.sampled_from([-1.0, 1.0])
    rows = draw(
        st.lists(st.lists(values, min_size=num_eq, max_size=num_eq), min_size=1, max_size=4)
    )
    return family, torch.tensor(rows, dtype=torch.float64)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25)
@given(data=st.data())
def test_constructed_point_is_feasible_for_every_parameter_in_the_box(
    name: str, data: st.DataObject
) -> None:
    """A^+ x satisfies every constraint for x anywhere in [-1, 1]^m, vertices included."""
    family, x = data.draw(family_and_parameters(name))
    y0 = family.constructed_point(x)
    assert family.eq_residual(y0, x).abs().max() < ROUNDING
    problem_rows = family.problem_ineq_residual(y0, x)
    assert problem_rows.max() <= ROUNDING
    if name.endswith("socp"):
        assert problem_rows.max() <= -SOC_MARGIN + ROUNDING  # strictly feasible
    if family.box_bound is not None:
        assert y0.abs().max() <= family.box_bound
    assert family.violation(y0, x).max_ineq.max() <= ROUNDING


@pytest.mark.parametrize("name", NAMES)
def test_squared_violation_zero_when_feasible_and_exact_when_not(name: str) -> None:
    """Zero at A^+ x; adding A^+ delta breaks A y = x by exactly delta."""
    family = small_family(name)
    x = 0.9 * family.sample_parameters(4, seed=1)
    y0 = family.constructed_point(x)
    feasible = family.violation(y0, x)
    assert feasible.squared.max() < 1e-24
    assert feasible.max_ineq.max() == 0.0
    delta = torch.full_like(x, 0.25)
    shifted = y0 + delta @ family.A_pinv.T
    broken = family.violation(shifted, x)
    torch.testing.assert_close(broken.max_eq, torch.full((4,), 0.25, dtype=torch.float64))
    assert (broken.squared >= family.num_eq * 0.25**2 - ROUNDING).all()
    assert torch.equal(family.squared_violation(shifted, x), broken.squared)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.1, 20.0))
def test_violation_parts_agree_with_the_residuals(name: str, seed: int, scale: float) -> None:
    """max |h|, max relu(g) and the squared sum are the residuals' own norms; the feasibility
    step's squared_violation (computed without the maxima) is the same sum."""
    family = small_family(name)
    generator = torch.Generator().manual_seed(seed)
    y = scale * torch.randn(3, family.num_vars, generator=generator, dtype=torch.float64)
    x = family.sample_parameters(3, seed)
    violation = family.violation(y, x)
    eq, ineq = family.eq_residual(y, x), family.ineq_residual(y, x)
    assert ineq.shape == (3, family.num_ineq_residuals)
    torch.testing.assert_close(violation.max_eq, eq.abs().max(dim=1).values)
    torch.testing.assert_close(violation.max_ineq, ineq.clamp_min(0).max(dim=1).values)
    expected = (eq**2).sum(1) + (ineq.clamp_min(0) ** 2).sum(1)
    torch.testing.assert_close(violation.squared, expected)
    torch.testing.assert_close(family.squared_violation(y, x), expected)
    assert (violation.squared >= violation.max_eq**2 + violation.max_ineq**2 - ROUNDING).all()


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("dc3")])
def test_box_rows_follow_the_problem_rows(name: str) -> None:
    """FSNet families append y <= 5 and -y <= 5; a coordinate at 6 violates by exactly 1."""
    family = small_family(name)
    assert family.box_bound == FSNET_BOX_BOUND
    x = family.sample_parameters(2, seed=0)
    y = family.constructed_point(x).clone()
    y[:, 3] = FSNET_BOX_BOUND + 1.0
    rows = family.ineq_residual(y, x)
    assert rows.shape[1] == family.num_ineq + 2 * family.num_vars
    torch.testing.assert_close(rows[:, family.num_ineq + 3], torch.ones(2, dtype=torch.float64))
    assert (family.violation(y, x).max_ineq >= 1.0).all()


@pytest.mark.parametrize("name", ["dc3_convex_qp", "dc3_nonconvex_qp"])
def test_dc3_recipe(name: str) -> None:
    """DC3: Q = diag(U[0, 1]), p ~ U[0, 1], no box, h = sum |G A^+|, linear constraints."""
    family = make_family(name, seed=17)
    q = torch.diagonal(family.Q)
    assert torch.equal(family.Q, torch.diag(q)) and q.min() >= 0 and q.max() <= 1
    assert family.p.min() >= 0 and family.p.max() <= 1
    assert family.A.min() < -1 and family.G.max() > 1  # Gaussian, not U[-1, 1]
    assert family.box_bound is None and not family.sine_constraints
    torch.testing.assert_close(family.h, (family.G @ torch.linalg.pinv(family.A)).abs().sum(1))
    x = family.sample_parameters(3, seed=0)
    assert family.ineq_residual(x @ family.A_pinv.T, x).shape == (3, 50)


@pytest.mark.parametrize("name", ["convex_qp", "convex_qcqp", "convex_socp"])
def test_fsnet_recipe(name: str) -> None:
    """FSNet: Q = diag(U[0, 0.5]); p, A, G ~ U[-1, 1]; QCQP H diagonals in [0, 0.1]."""
    family = make_family(name)
    assert (family.num_vars, family.num_eq, family.num_ineq) == (100, 50, 50)
    q = torch.diagonal(family.Q)
    assert torch.equal(family.Q, torch.diag(q)) and q.min() >= 0 and q.max() <= 0.5
    for tensor in (family.p, family.A, family.G):
        assert tensor.abs().max() <= 1
    if name == "convex_qp":
        torch.testing.assert_close(family.h, linear_bound(family.G, family.A_pinv))
    if name == "convex_qcqp":
        assert family.H_diag.min() >= 0 and family.H_diag.max() <= 0.1
    if name == "convex_socp":
        assert family.G.shape == (50, 50, 100) and family.c.shape == (50, 100)


def test_objective_values_match_their_formulas() -> None:
    """0.5 y^T Q y + p^T y; p^T sin(y) for nonconvex; + 0.1 ||y|| for nonsmooth."""
    convex, nonconvex, nonsmooth = (
        small_family(f"{kind}_qp") for kind in ("convex", "nonconvex", "nonsmooth")
    )
    y = torch.linspace(-2.0, 3.0, 20, dtype=torch.float64).reshape(2, 10)
    x = convex.sample_parameters(2, seed=0)
    Q, p = convex.Q.numpy(), convex.p.numpy()
    quadratic = np.array([0.5 * row @ Q @ row for row in y.numpy()])
    np.testing.assert_allclose(convex.objective(y, x).numpy(), quadratic + y.numpy() @ p)
    with_sine = quadratic + np.sin(y.numpy()) @ p
    np.testing.assert_allclose(nonconvex.objective(y, x).numpy(), with_sine)
    norm = NORM_WEIGHT * np.linalg.norm(y.numpy(), axis=1)
    np.testing.assert_allclose(nonsmooth.objective(y, x).numpy(), with_sine + norm)


@pytest.mark.parametrize("constraint", ["qp", "qcqp", "socp"])
def test_sine_constraints_match_the_convex_ones_at_the_anchor_only(constraint: str) -> None:
    """Same seed, same data; psi(A^+ x) = A^+ x, so the rows agree there and nowhere else."""
    convex, nonconvex = (small_family(f"{kind}_{constraint}") for kind in ("convex", "nonconvex"))
    assert same_data(convex, nonconvex) and nonconvex.sine_constraints
    x = convex.sample_parameters(3, seed=2)
    y0 = convex.constructed_point(x)
    torch.testing.assert_close(nonconvex.ineq_residual(y0, x), convex.ineq_residual(y0, x))
    moved = y0 + 1.5
    assert (nonconvex.ineq_residual(moved, x) - convex.ineq_residual(moved, x)).abs().max() > 0.1


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_finite_differences(name: str) -> None:
    """Objective, residuals and squared violation pass torch.autograd.gradcheck in float64."""
    family = small_family(name, num_vars=6, num_eq=3, num_ineq=3)
    x = family.sample_parameters(2, seed=5)
    generator = torch.Generator().manual_seed(0)
    y = family.constructed_point(x) + torch.randn(2, 6, generator=generator, dtype=torch.float64)
    y.requires_grad_(True)
    for function in (
        family.objective,
        family.eq_residual,
        family.ineq_residual,
        family.squared_violation,
    ):
        assert torch.autograd.gradcheck(lambda point, f=function: f(point, x), (y,))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.0, 5.0))
def test_closed_form_jacobian_equals_autograd(name: str, seed: int, scale: float) -> None:
    """problem_ineq_jacobian equals the autograd Jacobian of problem_ineq_residual, row by row,
    at points on and off the feasible set."""
    family = small_family(name, num_vars=7, num_eq=3, num_ineq=4)
    x = family.sample_parameters(3, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    y = family.constructed_point(x) + scale * torch.randn(3, 7, generator=generator, dtype=x.dtype)
    closed_form = family.problem_ineq_jacobian(y, x)
    assert closed_form.shape == (3, 4, 7)
    for row in range(3):
        autograd = torch.autograd.functional.jacobian(
            lambda point, r=row: family.problem_ineq_residual(point[None], x[r : r + 1])[0], y[row]
        )
        torch.testing.assert_close(closed_form[row], autograd, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_bits_other_seed_other_data(name: str) -> None:
    """make_family and sample_parameters are reproducible bit for bit and seed-sensitive."""
    assert same_data(small_family(name, seed=11), small_family(name, seed=11))
    assert not same_data(small_family(name, seed=11), small_family(name, seed=12))
    family = small_family(name)
    x = family.sample_parameters(6, seed=4)
    assert torch.equal(x, family.sample_parameters(6, seed=4))
    assert not torch.equal(x, family.sample_parameters(6, seed=5))
    assert x.shape == (6, 5) and x.dtype == torch.float64 and x.abs().max() <= 1


def test_parameter_stream_differs_from_the_family_stream() -> None:
    """Family seed == parameter seed must not reuse the family's uniforms (Q's, here)."""
    family = make_family("convex_qp", num_vars=10, num_eq=5, num_ineq=5, seed=7)
    reused = 4 * torch.diagonal(family.Q)[:5] - 1  # U[-1, 1] from the uniforms behind Q
    same_stream = torch.from_numpy(family_rng(7).uniform(-1.0, 1.0, size=5))
    torch.testing.assert_close(same_stream, reused)
    assert not torch.allclose(family.sample_parameters(1, seed=7)[0], reused)


def test_copies_keep_the_data() -> None:
    """with_arrays and to() copy every tensor; with_arrays refuses missing keys."""
    family = small_family("convex_socp")
    assert same_data(family.with_arrays(family.arrays()), family)
    assert same_data(family.to("cpu"), family)
    with pytest.raises(ValueError, match="exactly the keys"):
        family.with_arrays({"Q": family.arrays()["Q"]})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "convex_lp"}, "unknown family 'convex_lp'; allowed: convex_qcqp, convex_qp"),
        ({"name": "convex_qp", "num_vars": 0}, "num_vars must be a positive integer, got 0"),
        ({"name": "convex_qp", "num_eq": -2}, "num_eq must be a positive integer, got -2"),
        ({"name": "convex_qp", "num_ineq": 0}, "num_ineq must be a positive integer, got 0"),
        ({"name": "convex_qp", "num_ineq": 2.5}, "num_ineq must be a positive integer, got 2.5"),
        ({"name": "convex_qp", "num_eq": 10}, r"num_eq must be smaller than num_vars \(= 10\)"),
        ({"name": "convex_qp", "seed": -1}, "seed must be a non-negative integer, got -1"),
    ],
)
def test_bad_family_arguments_raise(arguments: dict[str, object], message: str) -> None:
    """An unknown family name or a bad size or seed raises a ValueError naming it."""
    with pytest.raises(ValueError, match=message):
        make_family(**{**SMALL, **arguments})


def test_unknown_family_lists_every_allowed_name() -> None:
    """An unknown family's error lists all 11 allowed family names."""
    with pytest.raises(ValueError) as error:
        make_family("qp")
    assert all(name in str(error.value) for name in FAMILIES)
    assert "dc3_nonconvex_qp" in FAMILIES and "nonsmooth_socp" in FAMILIES and len(FAMILIES) == 11


@pytest.mark.parametrize(
    ("y_shape", "x_shape", "message"),
    [
        ((2, 9), (2, 5), r"y must have shape \[B, num_vars\] = \[B, 10\], got \(2, 9\)"),
        ((10,), (2, 5), r"y must have shape \[B, num_vars\] = \[B, 10\], got \(10,\)"),
        ((2, 10), (2, 4), r"x must have shape \[B, num_eq\] = \[B, 5\], got \(2, 4\)"),
        ((2, 10), (3, 5), "same batch size B, got 2 and 3"),
    ],
)
def test_wrong_shapes_raise(
    y_shape: tuple[int, ...], x_shape: tuple[int, ...], message: str
) -> None:
    """Objective, residuals and violation reject mis-shaped y or x, naming the shape."""
    family = small_family("nonconvex_qcqp")
    y, x = torch.zeros(y_shape, dtype=torch.float64), torch.zeros(x_shape, dtype=torch.float64)
    for function in (family.objective, family.eq_residual, family.ineq_residual, family.violation):
        with pytest.raises(ValueError, match=message):
            function(y, x)


def test_nan_dtype_and_count_errors() -> None:
    """NaN inputs, float32 y, zero instances and a negative seed each raise clearly."""
    family = small_family("convex_qp")
    x = family.sample_parameters(2, seed=0)
    y = family.constructed_point(x)
    with pytest.raises(ValueError, match="y must be finite: it contains NaN"):
        family.objective(torch.full_like(y, float("nan")), x)
    with pytest.raises(ValueError, match="x must be finite: it contains NaN"):
        family.constructed_point(torch.full_like(x, float("nan")))
    with pytest.raises(ValueError, match="y must have dtype torch.float64"):
        family.eq_residual(y.float(), x)
    with pytest.raises(ValueError, match="num_instances must be a positive integer, got 0"):
        family.sample_parameters(0, seed=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        family.sample_parameters(2, seed=-3)
