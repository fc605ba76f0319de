"""DualAscent: dual step math, Lagrangian gradient, KKT convergence, state round trip, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.optimizers import DualAscent, equality, inequality


def leaf(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def test_equality_multipliers_unprojected_inequality_projected() -> None:
    """SGD ascent mu += lr * r: the equality multiplier goes negative, the inequality one is cut."""
    duals = DualAscent(dual_lr=0.5)
    h, g = leaf([-2.0, 1.0]), leaf([-3.0, 4.0])
    duals.lagrangian(torch.zeros((), dtype=torch.float64), {"h": equality(h), "g": inequality(g)})
    assert duals.step()
    assert duals.multipliers["h"].tolist() == [-1.0, 0.5]
    assert duals.multipliers["g"].tolist() == [0.0, 2.0]


@settings(max_examples=25, deadline=None)
@given(
    residuals=st.lists(
        st.lists(st.floats(-5, 5, allow_nan=False), min_size=3, max_size=3), min_size=1, max_size=8
    ),
    lr=st.floats(1e-3, 2.0),
)
def test_sgd_dual_iterates_match_running_sums(residuals: list[list[float]], lr: float) -> None:
    """Equality: mu_k = lr * sum r; inequality: mu_k = max(0, mu_{k-1} + lr * r_k)."""
    duals = DualAscent(dual_lr=lr)
    expected_eq = torch.zeros(3, dtype=torch.float64)
    expected_ineq = torch.zeros(3, dtype=torch.float64)
    for values in residuals:
        r = leaf(values)
        duals.lagrangian(r.sum() * 0, {"eq": equality(r), "ineq": inequality(r * 1.0)})
        duals.step()
        expected_eq += lr * torch.tensor(values, dtype=torch.float64)
        expected_ineq = (expected_ineq + lr * torch.tensor(values, dtype=torch.float64)).clamp(0)
    torch.testing.assert_close(duals.multipliers["eq"], expected_eq)
    torch.testing.assert_close(duals.multipliers["ineq"], expected_ineq)
    assert bool((duals.multipliers["ineq"] >= 0).all())


def test_lagrangian_gradient_equals_autograd_of_f_plus_mu_h() -> None:
    """d/dtheta of the returned Lagrangian = grad f + sum mu * grad h (+ c * h * grad h)."""
    theta = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    mu_h, mu_g, c = torch.tensor([0.7, -0.4], dtype=torch.float64), 1.5, 0.25

    def parts(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return (t**2).sum(), torch.stack([t[0] * t[1], t[2] - 1.0]), t.sum() - 1.0

    duals = DualAscent(augmented_penalty=c)
    f, h, g = parts(theta)
    duals.lagrangian(f, {"h": equality(h), "g": inequality(g)})
    duals.multipliers["h"].copy_(mu_h)
    duals.multipliers["g"].fill_(mu_g)
    f, h, g = parts(theta)
    (grad,) = torch.autograd.grad(
        duals.lagrangian(f, {"h": equality(h), "g": inequality(g)}), theta
    )
    f, h, g = parts(theta)
    reference = f + (mu_h * h).sum() + mu_g * g + 0.5 * c * (h.square().sum() + torch.relu(g) ** 2)
    (expected,) = torch.autograd.grad(reference, theta)
    torch.testing.assert_close(grad, expected)


@pytest.mark.parametrize("augmented_penalty", [0.0, 1.0])
def test_least_squares_with_linear_equality_reaches_kkt_point(augmented_penalty: float) -> None:
    """min 0.5||Ax - b||^2 s.t. Cx = d: gradient descent-ascent converges to the KKT solution."""
    generator = torch.Generator().manual_seed(3)
    a = torch.randn(12, 5, generator=generator, dtype=torch.float64)
    b = torch.randn(12, generator=generator, dtype=torch.float64)
    c = torch.randn(2, 5, generator=generator, dtype=torch.float64)
    d = torch.randn(2, generator=generator, dtype=torch.float64)
    kkt = torch.zeros(7, 7, dtype=torch.float64)
    kkt[:5, :5], kkt[:5, 5:], kkt[5:, :5] = a.T @ a, c.T, c
    solution = torch.linalg.solve(kkt, torch.cat([a.T @ b, d]))
    x_star, mu_star = solution[:5], solution[5:]

    x = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    primal = torch.optim.SGD([x], lr=0.02)
    duals = DualAscent(dual_lr=0.05, augmented_penalty=augmented_penalty)
    for _ in range(6000):
        loss = 0.5 * (a @ x - b).square().sum()
        lagrangian = duals.lagrangian(loss, {"linear": equality(c @ x - d)})
        primal.zero_grad()
        lagrangian.backward()
        primal.step()
        duals.step()
    assert float((x.detach() - x_star).abs().max()) < 1e-4
    assert float((duals.multipliers["linear"] - mu_star).abs().max()) < 1e-4


def test_update_every_averages_the_window_and_warmup_skips() -> None:
    """update_every=2 steps on the window mean; a due step inside the warm-up is skipped."""
    duals = DualAscent(dual_lr=1.0, update_every=2, warmup_steps=2)
    ran = []
    for value in (1.0, 3.0, 5.0, 9.0):
        duals.lagrangian(torch.zeros(()), {"h": equality(leaf([value]))})
        ran.append(duals.step())
    assert ran == [False, False, False, True]  # step 2 is due but inside the warm-up
    assert duals.multipliers["h"].tolist() == [7.0]  # mean of the window (5, 9)


def test_adam_dual_optimizer_and_kwargs() -> None:
    """First Adam step moves each multiplier by lr in the residual's sign direction."""
    duals = DualAscent(dual_optimizer="adam", dual_lr=0.1, dual_optimizer_kwargs={"eps": 0.0})
    duals.lagrangian(torch.zeros(()), {"h": equality(leaf([-4.0, 0.5]))})
    duals.step()
    torch.testing.assert_close(
        duals.multipliers["h"], torch.tensor([-0.1, 0.1], dtype=torch.float64)
    )


def run_steps(duals: DualAscent, values: list[float]) -> None:
    for value in values:
        duals.lagrangian(torch.zeros(()), {"h": equality(leaf([value, -value]))})
        duals.step()


def test_state_dict_round_trip_continues_identically() -> None:
    """Stop mid-window with Adam state, restore into a fresh object: same multipliers after."""
    values = [0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 3.0]
    straight = DualAscent(dual_optimizer="adam", dual_lr=0.1, update_every=2)
    run_steps(straight, values)
    first = DualAscent(dual_optimizer="adam", dual_lr=0.1, update_every=2)
    run_steps(first, values[:3])
    resumed = DualAscent(dual_optimizer="adam", dual_lr=0.1, update_every=2)
    resumed.load_state_dict(first.state_dict())
    run_steps(resumed, values[3:])
    assert resumed.primal_steps == straight.primal_steps == 7
    torch.testing.assert_close(resumed.multipliers["h"], straight.multipliers["h"])
    assert set(first.state_dict()) == {"flat", "_extra_state"}  # `lower` is derived, not saved


def test_loading_other_sizes_into_existing_multipliers_fails() -> None:
    """Only a fresh instance takes the saved size; one with multipliers keeps torch's check."""
    saved = DualAscent()
    run_steps(saved, [1.0])
    other = DualAscent()
    other.lagrangian(torch.zeros(()), {"h": equality(leaf([1.0, 2.0, 3.0]))})
    with pytest.raises(RuntimeError, match="size mismatch for flat"):
        other.load_state_dict(saved.state_dict())


def test_moving_the_module_keeps_the_dual_optimizer_state() -> None:
    """`.double()` replaces the buffer; the next step's Adam continues the old state: after
    residuals 1, -2, 0.5 (gradients -r) exp_avg = 0.1 (0.81 * -1 + 0.9 * 2 - 0.5) = 0.049."""
    duals = DualAscent(dual_optimizer="adam", dual_lr=0.1)
    for value in (1.0, -2.0, 0.5):
        duals.lagrangian(
            torch.zeros(()), {"h": equality(torch.tensor([value], requires_grad=True))}
        )
        duals.step()
        if value == -2.0:
            first = duals.optimizer
            duals.double()
    assert duals.flat.dtype == duals.lower.dtype == torch.float64
    assert (
        duals.optimizer is not first and duals.optimizer.param_groups[0]["params"][0] is duals.flat
    )
    state = duals.optimizer.state_dict()["state"][0]
    assert int(state["step"]) == 3
    torch.testing.assert_close(state["exp_avg"], torch.tensor([0.049], dtype=torch.float64))


@pytest.mark.parametrize(
    ("constraints", "message"),
    [
        ({"parity": equality(leaf([1.0, 2.0, 3.0]))}, "constraint 'parity': residual has 3"),
        ({"parity": equality(leaf([math.nan, 1.0]))}, "constraint 'parity': residual is not fin"),
        ({"parity": inequality(leaf([1.0, 2.0]))}, "constraint 'parity': kind changed"),
        ({"other": equality(leaf([1.0, 2.0]))}, "names changed"),
        ({"parity": equality(torch.ones(2))}, "constraint 'parity': residual does not depend"),
        ({"parity": equality(torch.ones(2, 2, requires_grad=True))}, "scalar or a 1-D vector"),
        ({"parity": (1.0, 2.0)}, "constraint 'parity': expected optiforge.optimizers.equality"),
    ],
)
def test_bad_residuals_name_the_constraint(constraints: dict, message: str) -> None:
    """A residual of wrong size, NaN, kind, name, type or without grad raises naming it."""
    duals = DualAscent()
    duals.lagrangian(torch.zeros(()), {"parity": equality(leaf([0.0, 0.0]))})
    with pytest.raises((ValueError, TypeError), match=message):
        duals.lagrangian(torch.zeros(()), constraints)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dual_optimizer": "rmsprop"}, r"dual_optimizer must be one of \['adam', 'sgd'\]"),
        ({"dual_lr": 0.0}, "dual_lr must be > 0"),
        ({"update_every": 0}, "update_every must be > 0"),
        ({"warmup_steps": -1}, "warmup_steps must be >= 0"),
        ({"augmented_penalty": -0.1}, "augmented_penalty must be >= 0"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, message: str) -> None:
    """Invalid DualAscent arguments raise a ValueError naming the field."""
    with pytest.raises(ValueError, match=message):
        DualAscent(**kwargs)


def test_constraint_kind_is_checked() -> None:
    """ConstraintResidual with an unknown kind raises."""
    from optiforge.optimizers import ConstraintResidual

    with pytest.raises(ValueError, match="kind must be one of"):
        ConstraintResidual(torch.zeros(1), "parity")  # type: ignore[arg-type]
