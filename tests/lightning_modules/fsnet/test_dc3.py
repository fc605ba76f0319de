"""DC3's equality completion and inequality correction."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.lightning_modules.fsnet.dc3 import EqualityCompletion, InequalityCorrection
from optiforge.problems.constrained import FAMILIES, LinearInequalityFamily, make_family


def small(name: str):
    return make_family(name, num_vars=20, num_eq=8, num_ineq=8)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(name=st.sampled_from(sorted(FAMILIES)), seed=st.integers(0, 2**20))
def test_completion_satisfies_equalities_and_inverts_partial(name: str, seed: int) -> None:
    """Completion satisfies the equalities exactly and partial() inverts complete()."""
    family = small(name)
    completion = EqualityCompletion(family.A)
    x = family.sample_parameters(5, seed)
    z = torch.randn(5, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    y = completion.complete(z, x)
    assert family.eq_residual(y, x).abs().max() < 1e-12
    assert torch.equal(completion.partial(y), z)
    feasible = family.constructed_point(x)
    assert torch.allclose(completion.complete(completion.partial(feasible), x), feasible)


def test_pivoting_avoids_an_ill_conditioned_block() -> None:
    """The first m columns nearly dependent: the pivoted choice is far better conditioned."""
    generator = torch.Generator().manual_seed(0)
    A = torch.randn(3, 7, dtype=torch.float64, generator=generator)
    A[:, 1] = A[:, 0] + 1e-9 * torch.randn(3, dtype=torch.float64, generator=generator)
    completion = EqualityCompletion(A)
    chosen = torch.linalg.cond(A[:, completion.dependent])
    assert chosen < 1e3 < torch.linalg.cond(A[:, :3])


def tiny_family() -> LinearInequalityFamily:
    """min 0 s.t. y1 + y2 = x, y1 <= 0.5 (no box)."""
    A = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    return LinearInequalityFamily(
        name="tiny",
        objective_kind="convex",
        sine_constraints=False,
        box_bound=None,
        seed=0,
        Q=torch.zeros(2, 2, dtype=torch.float64),
        p=torch.zeros(2, dtype=torch.float64),
        A=A,
        A_pinv=torch.linalg.pinv(A),
        G=torch.tensor([[1.0, 0.0]], dtype=torch.float64),
        h=torch.tensor([0.5], dtype=torch.float64),
    )


def test_one_correction_step_by_hand() -> None:
    """y = (2, 0), x = 2: violation (y1 - 0.5)^2 = 2.25. With y1 dependent or independent the
    gradient with respect to the free coordinate is +-2 (y1 - 0.5) = +-3; one step of lr 0.1
    moves y1 to 2 - 0.3 = 1.7 and y2 to 0.3."""
    family = tiny_family()
    completion = EqualityCompletion(family.A)
    x = torch.tensor([[2.0]], dtype=torch.float64)
    y = torch.tensor([[2.0, 0.0]], dtype=torch.float64)
    corrected = InequalityCorrection(steps_test=1, lr=0.1, momentum=0.0)(
        family, completion, y, x, training=False
    )
    assert torch.allclose(corrected, torch.tensor([[1.7, 0.3]], dtype=torch.float64))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_correction_reduces_inequality_violation(name: str) -> None:
    """Inequality correction lowers each positive violation and keeps the equalities."""
    family = small(name)
    completion = EqualityCompletion(family.A)
    x = family.sample_parameters(8, 1)
    z = 3 * torch.randn(8, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = completion.complete(z, x)
    corrected = InequalityCorrection(steps_test=10, lr=1e-3)(
        family, completion, y, x, training=False
    )
    before = family.ineq_residual(y, x).relu().square().sum(dim=-1)
    after = family.ineq_residual(corrected, x).relu().square().sum(dim=-1)
    assert (after[before > 0] < before[before > 0]).all()
    assert family.eq_residual(corrected, x).abs().max() < 1e-10


def test_training_correction_gradient_matches_finite_differences() -> None:
    """The unrolled training correction's gradient matches central finite differences."""
    family = make_family("convex_qp", num_vars=6, num_eq=2, num_ineq=3)
    completion = EqualityCompletion(family.A)
    correction = InequalityCorrection(steps_train=3, lr=1e-2, momentum=0.5)
    x = family.sample_parameters(1, 0)
    y0 = completion.complete(
        3 * torch.randn(1, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3)), x
    )
    weights = torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))

    def loss(y: torch.Tensor) -> torch.Tensor:
        return (correction(family, completion, y, x, training=True) * weights).sum()

    point = y0.clone().requires_grad_(True)
    (gradient,) = torch.autograd.grad(loss(point), point)
    numeric = torch.zeros(6, dtype=torch.float64)
    for i in range(6):
        step = torch.zeros_like(y0)
        step[0, i] = 1e-6
        numeric[i] = (loss(y0 + step) - loss(y0 - step)).detach() / 2e-6
    assert torch.allclose(gradient[0], numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("field", "value"), [("steps_train", -1), ("steps_test", -1), ("lr", 0.0), ("momentum", 1.0)]
)
def test_bad_arguments_name_the_field(field: str, value: float) -> None:
    """Negative steps, zero lr or momentum 1 for InequalityCorrection raise naming the field."""
    with pytest.raises(ValueError, match=field):
        InequalityCorrection(**{field: value})
