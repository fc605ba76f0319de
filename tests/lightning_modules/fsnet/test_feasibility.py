"""FSNet's feasibility step: decrease, convergence, unrolled gradients, straight-through, errors."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.lightning_modules.fsnet.feasibility import FeasibilitySeeker
from optiforge.problems.constrained import FAMILIES, make_family


def start(name: str, seed: int, batch: int = 16, spread: float = 2.0, device: str = "cpu"):
    """A family, its parameters and a start `spread` away from a feasible point, on `device`."""
    family = make_family(name, num_vars=20, num_eq=8, num_ineq=8).to(device)
    x = family.sample_parameters(batch, seed).to(device)
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(batch, 20, dtype=torch.float64, generator=generator).to(device)
    return family, x, family.constructed_point(x) + spread * noise


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_violation_strictly_decreases_on_every_family(name: str, device: str) -> None:
    """Every family: the violation falls below 1e-8 from a far start, on CPU and CUDA."""
    family, x, y0 = start(name, 0, device=device)
    result = FeasibilitySeeker(max_iter=50, unrolled_iter=0, tolerance=1e-14)(
        family.squared_violation, y0, x
    )
    before = family.squared_violation(y0, x)
    assert (result.violation < before).all()
    assert result.violation.max() < 1e-8
    assert torch.equal(result.violation, family.squared_violation(result.y, x))
    assert result.y.device.type == device


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(name=st.sampled_from(sorted(FAMILIES)), seed=st.integers(0, 2**20))
def test_violation_never_increases_from_iteration_to_iteration(name: str, seed: int) -> None:
    """More iterations never leave a larger violation (monotone line search)."""
    family, x, y0 = start(name, seed, batch=4)
    previous = family.squared_violation(y0, x)
    for iterations in range(1, 6):
        seeker = FeasibilitySeeker(max_iter=iterations, unrolled_iter=0, tolerance=0.0)
        result = seeker(family.squared_violation, y0, x)
        assert torch.isfinite(result.y).all()
        assert (result.violation <= previous).all()
        previous = result.violation


def test_gradient_of_the_unrolled_solver_matches_finite_differences() -> None:
    """Full unroll of 4 iterations on a tiny convex QP: autograd = central differences."""
    family = make_family("convex_qp", num_vars=6, num_eq=2, num_ineq=3)
    x = family.sample_parameters(1, 3)
    y0 = family.constructed_point(x) + 0.3 * torch.randn(
        1, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1)
    )
    weights = torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    seeker = FeasibilitySeeker(max_iter=4, unrolled_iter=4, tolerance=0.0, scale=1.0)

    def loss(y: torch.Tensor) -> torch.Tensor:
        return (seeker(family.squared_violation, y, x).y * weights).sum()

    point = y0.clone().requires_grad_(True)
    (gradient,) = torch.autograd.grad(loss(point), point)
    eps = 1e-6
    numeric = torch.zeros(6, dtype=torch.float64)
    for i in range(6):
        step = torch.zeros_like(y0)
        step[0, i] = eps
        with torch.no_grad():
            numeric[i] = (loss(y0 + step) - loss(y0 - step)) / (2 * eps)
    assert torch.allclose(gradient[0], numeric, rtol=1e-4, atol=1e-6)
    assert not torch.allclose(gradient[0], weights)  # the solver's Jacobian is not identity


def test_straight_through_without_unrolling_is_identity() -> None:
    """Without unrolled iterations the backward pass is the identity (straight-through)."""
    family, x, y0 = start("convex_qp", 1, batch=3)
    point = y0.clone().requires_grad_(True)
    result = FeasibilitySeeker(max_iter=10, unrolled_iter=0)(family.squared_violation, point, x)
    weights = torch.randn_like(y0)
    (gradient,) = torch.autograd.grad((result.y * weights).sum(), point)
    assert torch.equal(gradient, weights)
    assert not torch.allclose(result.y, y0)


def test_feasible_rows_are_returned_unchanged(device: str) -> None:
    """Rows that start feasible come back bit for bit; the others move."""
    family, x, y0 = start("nonconvex_qcqp", 2, batch=6, device=device)
    y0[:3] = family.constructed_point(x)[:3]
    result = FeasibilitySeeker(max_iter=20, unrolled_iter=0, tolerance=1e-12)(
        family.squared_violation, y0, x
    )
    assert torch.equal(result.y[:3], y0[:3])
    assert not torch.allclose(result.y[3:], y0[3:])


def test_no_grad_path_gives_the_same_values(device: str) -> None:
    """The no-grad path and the unrolled path give the same point."""
    family, x, y0 = start("nonsmooth_socp", 4, batch=5, device=device)
    seeker = FeasibilitySeeker(max_iter=15, unrolled_iter=5)
    with_graph = seeker(family.squared_violation, y0, x.clone().requires_grad_(True))
    with torch.no_grad():
        without = seeker(family.squared_violation, y0, x)
    assert torch.allclose(with_graph.y.detach(), without.y, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_iter", -1),
        ("unrolled_iter", 60),
        ("memory", 0),
        ("scale", 0.0),
        ("tolerance", -1.0),
        ("armijo", 1.0),
        ("backtrack", 0.0),
        ("first_step", 0.0),
        ("max_backtracks", 0),
    ],
)
def test_bad_arguments_name_the_field(field: str, value: float) -> None:
    """Each out-of-range argument is refused with its name."""
    with pytest.raises(ValueError, match=field):
        FeasibilitySeeker(**{field: value})


def test_nan_start_is_refused() -> None:
    """A NaN in the start is refused, not iterated on."""
    family, x, y0 = start("convex_qp", 0, batch=2)
    y0[1, 3] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        FeasibilitySeeker()(family.squared_violation, y0, x)


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(name=st.sampled_from(sorted(FAMILIES)), seed=st.integers(0, 2**20))
def test_each_row_is_solved_as_if_it_were_alone(name: str, seed: int) -> None:
    """Rows are independent problems: a batch's rows (whose line searches backtrack different
    numbers of times, the later trials on row subsets) equal the rows solved one at a time."""
    family, x, y0 = start(name, seed, batch=5)
    seeker = FeasibilitySeeker(max_iter=15, unrolled_iter=0, tolerance=0.0)
    together = seeker(family.squared_violation, y0, x).y
    for row in range(5):
        alone = seeker(family.squared_violation, y0[row : row + 1], x[row : row + 1]).y
        assert torch.allclose(together[row : row + 1], alone, rtol=0, atol=1e-9)


def test_x_must_have_one_row_per_start() -> None:
    """A parameter batch of the wrong length fails before any iteration, naming x."""
    family, x, y0 = start("convex_qp", 0, batch=4)
    with pytest.raises(ValueError, match="x must have one row per row of y0"):
        FeasibilitySeeker()(family.squared_violation, y0, x[:3])
