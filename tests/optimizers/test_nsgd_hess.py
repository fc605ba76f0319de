"""NSGDHess and Clip NSGDHess: hand-computed steps, exact HVPs, clipping, closure, state."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.optimizers import ClipNSGDHess, NSGDHess
from optiforge.optimizers.nsgd_hess import clip_coefficient
from tests.cli_helpers import DEFAULT_CONFIG, run_cli

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
)

HVP_MODES = ["autograd", "finite_difference"]
F64 = torch.float64
SPD = torch.tensor([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], dtype=F64)


class Closure:
    """LBFGS-style closure of `loss_fn(x)`; backward keeps the graph iff the optimizer asks."""

    def __init__(self, optimizer: NSGDHess, x: Tensor, loss_fn: Callable[[Tensor], Tensor]) -> None:
        self.optimizer = optimizer
        self.x = x
        self.loss_fn = loss_fn
        self.calls = 0

    def __call__(self) -> Tensor:
        self.calls += 1
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.x)
        loss.backward(create_graph=self.optimizer.is_second_order)
        return loss.detach()


def half_squared_norm(x: Tensor) -> Tensor:
    return 0.5 * (x**2).sum()


def cubic(x: Tensor) -> Tensor:
    """f = Σ x³/6 + ½‖x‖²: ∇f = x²/2 + x, ∇²f = diag(x) + I (central differences are exact)."""
    return (x**3).sum() / 6 + 0.5 * (x**2).sum()


def quadratic(x: Tensor) -> Tensor:
    """f = ½ xᵀAx with the SPD matrix A = SPD: ∇²f v = A v."""
    return 0.5 * x @ SPD @ x


def parameter(*values: float) -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.tensor(values, dtype=F64))


def first_q(seed: int) -> float:
    """The q_1 an optimizer seeded with `seed` draws (its first draw, at iteration t = 1)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.rand((), generator=generator, dtype=F64).item()


@pytest.mark.parametrize("hvp", HVP_MODES)
def test_two_steps_by_hand_on_half_squared_norm(hvp: str) -> None:
    """x0 = (3, 4), γ = α = ½ on ½‖x‖²: x1 = (2.7, 3.6), g1 = (2.7, 3.6), x2 = (2.4, 3.2)."""
    x = parameter(3.0, 4.0)
    optimizer = NSGDHess([x], lr=0.5, alpha=0.5, hvp=hvp, seed=0)
    closure = Closure(optimizer, x, half_squared_norm)
    optimizer.step(closure)
    torch.testing.assert_close(x.detach(), torch.tensor([2.7, 3.6], dtype=F64))
    optimizer.step(closure)
    # g1 = ½(g0 + I v) + ½ x1 = ½(3, 4) + ½(-0.3, -0.4) + ½(2.7, 3.6) = (2.7, 3.6), ‖g1‖ = 4.5.
    torch.testing.assert_close(optimizer.state[x]["momentum"], torch.tensor([2.7, 3.6], dtype=F64))
    torch.testing.assert_close(x.detach(), torch.tensor([2.4, 3.2], dtype=F64))


@pytest.mark.parametrize("hvp", HVP_MODES)
def test_second_step_uses_the_hessian_at_the_random_point(hvp: str) -> None:
    """On the cubic, g1 = (1-α)(g0 + (x̂⊙v + v)) + α∇f(x1) with x̂ = q x1 + (1-q) x0."""
    lr, alpha, seed = 0.3, 0.25, 7
    x = parameter(1.0, 2.0)
    optimizer = NSGDHess([x], lr=lr, alpha=alpha, hvp=hvp, seed=seed)
    closure = Closure(optimizer, x, cubic)
    x0 = x.detach().clone()
    g0 = x0**2 / 2 + x0
    optimizer.step(closure)
    x1 = x0 - lr * g0 / g0.norm()
    torch.testing.assert_close(x.detach(), x1)
    optimizer.step(closure)
    q = first_q(seed)
    v = x1 - x0
    x_hat = q * x1 + (1 - q) * x0
    g1 = (1 - alpha) * (g0 + x_hat * v + v) + alpha * (x1**2 / 2 + x1)
    torch.testing.assert_close(optimizer.state[x]["momentum"], g1, atol=1e-9, rtol=0)
    torch.testing.assert_close(x.detach(), x1 - lr * g1 / g1.norm(), atol=1e-9, rtol=0)


@pytest.mark.parametrize("hvp", HVP_MODES)
def test_hessian_vector_product_is_exact_on_quadratic(hvp: str) -> None:
    """For f = ½ xᵀAx both HVP modes give A v: g1 = (1-α)(g0 + A v) + α A x1."""
    alpha = 0.25
    x = parameter(1.0, -2.0, 0.5)
    optimizer = NSGDHess([x], lr=0.2, alpha=alpha, hvp=hvp, seed=0)
    closure = Closure(optimizer, x, quadratic)
    x0 = x.detach().clone()
    optimizer.step(closure)
    x1 = x.detach().clone()
    optimizer.step(closure)
    expected = (1 - alpha) * (SPD @ x0 + SPD @ (x1 - x0)) + alpha * SPD @ x1
    torch.testing.assert_close(optimizer.state[x]["momentum"], expected, atol=1e-10, rtol=0)


def test_clip_coefficient_switches_exactly_at_the_threshold() -> None:
    """min{1, λ/‖v‖} is 1 for ‖v‖ <= λ (and v = 0) and λ/‖v‖ < 1 just above."""
    norm = torch.tensor(5.0, dtype=F64)
    assert clip_coefficient(norm, 5.0).item() == 1.0
    assert clip_coefficient(norm, 6.0).item() == 1.0
    below = math.nextafter(5.0, 0.0)
    coefficient = clip_coefficient(norm, below).item()
    assert coefficient < 1.0
    assert coefficient == pytest.approx(below / 5.0, rel=1e-15)
    assert clip_coefficient(torch.tensor(0.0, dtype=F64), 1.0).item() == 1.0


@pytest.mark.parametrize(
    ("grad_clip", "expected"),
    [(5.0, [3.0, 4.0]), (math.nextafter(5.0, 0.0), [3.0, 4.0]), (2.5, [1.5, 2.0])],
    ids=["at-threshold", "just-below", "half"],
)
def test_gradient_clipping_regimes(grad_clip: float, expected: list[float]) -> None:
    """g0 = clip(∇f(x0), λ) with ‖∇f(x0)‖ = 5: unchanged at λ = 5, scaled to norm λ below."""
    x = parameter(3.0, 4.0)
    optimizer = ClipNSGDHess([x], lr=0.1, grad_clip=grad_clip, seed=0)
    optimizer.step(Closure(optimizer, x, half_squared_norm))
    momentum = optimizer.state[x]["momentum"]
    if grad_clip == 5.0:
        assert torch.equal(momentum, torch.tensor([3.0, 4.0], dtype=F64))
    else:
        assert not torch.equal(momentum, torch.tensor([3.0, 4.0], dtype=F64))
        assert momentum.norm().item() == pytest.approx(grad_clip, rel=1e-15)
    torch.testing.assert_close(momentum, torch.tensor(expected, dtype=F64))


def test_hessian_clip_at_threshold_equals_nsgd_hess() -> None:
    """On f = ‖x‖² (∇²f u has norm 2), λ_h = 2 leaves the Hessian term intact: same trajectory."""
    trajectories = []
    for make in (
        lambda p: NSGDHess(p, lr=0.1, alpha=0.3, seed=3),
        lambda p: ClipNSGDHess(p, lr=0.1, alpha=0.3, grad_clip=1e9, hess_clip=2.0, seed=3),
    ):
        x = parameter(0.5, -1.5, 2.0)
        optimizer = make([x])
        closure = Closure(optimizer, x, lambda y: (y**2).sum())
        for _ in range(5):
            optimizer.step(closure)
        trajectories.append(x.detach().clone())
    assert torch.equal(*trajectories)


def test_hessian_clip_below_threshold_scales_the_term() -> None:
    """On f = ‖x‖² with λ_h = 1, the Hessian term clip(2v, ‖v‖) is v: g1 = (1-α)(g0 + v) + α 2x1."""
    alpha = 0.3
    x = parameter(0.5, -1.5, 2.0)
    optimizer = ClipNSGDHess([x], lr=0.1, alpha=alpha, grad_clip=1e9, hess_clip=1.0, seed=0)
    closure = Closure(optimizer, x, lambda y: (y**2).sum())
    x0 = x.detach().clone()
    optimizer.step(closure)
    x1 = x.detach().clone()
    optimizer.step(closure)
    expected = (1 - alpha) * (2 * x0 + (x1 - x0)) + alpha * 2 * x1
    torch.testing.assert_close(optimizer.state[x]["momentum"], expected, atol=1e-12, rtol=0)


@pytest.mark.parametrize(("hvp", "calls_after_first"), [("autograd", 2), ("finite_difference", 3)])
def test_closure_calls_per_step(hvp: str, calls_after_first: int) -> None:
    """1 closure call at the first step, then 2 (autograd) or 3 (finite difference); the loss
    returned is the one at x_t."""
    x = parameter(1.0, 2.0)
    optimizer = NSGDHess([x], lr=0.1, hvp=hvp, seed=0)
    closure = Closure(optimizer, x, cubic)
    counts = []
    for _ in range(4):
        before_calls, x_t = closure.calls, x.detach().clone()
        loss = optimizer.step(closure)
        counts.append(closure.calls - before_calls)
        torch.testing.assert_close(loss, cubic(x_t))
    assert counts == [1] + [calls_after_first] * 3


@pytest.mark.parametrize("hvp", HVP_MODES)
@pytest.mark.parametrize("cls", [NSGDHess, ClipNSGDHess])
def test_state_dict_round_trip_continues_exactly(cls: type[NSGDHess], hvp: str) -> None:
    """5 steps, save, load into a fresh optimizer (other seed), 5 steps == 10 steps in one go."""

    def make(x: Tensor, seed: int) -> NSGDHess:
        groups = [{"params": [x]}]
        if cls is ClipNSGDHess:
            return ClipNSGDHess(groups, lr=0.2, grad_clip=1.0, hess_clip=0.5, hvp=hvp, seed=seed)
        return NSGDHess(groups, lr=0.2, hvp=hvp, seed=seed)

    start = (1.0, -2.0, 0.5)
    x_full = parameter(*start)
    full = make(x_full, seed=11)
    for _ in range(10):
        full.step(Closure(full, x_full, cubic))

    x_part = parameter(*start)
    first = make(x_part, seed=11)
    for _ in range(5):
        first.step(Closure(first, x_part, cubic))
    buffer = io.BytesIO()
    torch.save(first.state_dict(), buffer)
    buffer.seek(0)
    x_resumed = torch.nn.Parameter(x_part.detach().clone())
    second = make(x_resumed, seed=999)
    second.load_state_dict(torch.load(buffer, weights_only=False))
    for _ in range(5):
        second.step(Closure(second, x_resumed, cubic))
    assert torch.equal(x_full.detach(), x_resumed.detach())
    assert torch.equal(full.state[x_full]["momentum"], second.state[x_resumed]["momentum"])


def test_load_state_dict_without_generator_state_raises() -> None:
    """A state_dict from another optimizer is refused with a message naming the missing key."""
    x = parameter(1.0)
    optimizer = NSGDHess([x], lr=0.1)
    with pytest.raises(ValueError, match="q_generator_state"):
        optimizer.load_state_dict(torch.optim.SGD([x], lr=0.1).state_dict())


@pytest.mark.parametrize("hvp", HVP_MODES)
@pytest.mark.parametrize("cls", [NSGDHess, ClipNSGDHess])
def test_converges_on_deterministic_quadratic(cls: type[NSGDHess], hvp: str) -> None:
    """On ½(x-b)ᵀA(x-b) from 0 (‖b‖ ≈ 2.3) 500 steps of length γ = 0.01 end within γ of b."""
    b = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
    x = parameter(0.0, 0.0, 0.0)
    optimizer = cls([x], lr=0.01, hvp=hvp, seed=0)
    closure = Closure(optimizer, x, lambda y: quadratic(y - b))
    for _ in range(500):
        optimizer.step(closure)
    assert (x.detach() - b).norm().item() < 0.01


def test_global_norm_over_param_groups() -> None:
    """Two groups with γ1, γ2 share one ‖g‖: (‖Δ1‖/γ1)² + (‖Δ2‖/γ2)² = 1."""
    a, b = parameter(3.0, 1.0), parameter(-2.0)
    optimizer = NSGDHess([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.4}], seed=0)
    start_a, start_b = a.detach().clone(), b.detach().clone()

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = half_squared_norm(a) + (b**2).sum()
        loss.backward(create_graph=True)
        return loss.detach()

    optimizer.step(closure)
    ratio = ((a.detach() - start_a).norm() / 0.1) ** 2 + ((b.detach() - start_b).norm() / 0.4) ** 2
    assert ratio.item() == pytest.approx(1.0, rel=1e-12)


def test_parameters_without_gradient_are_untouched() -> None:
    """A parameter the loss does not use keeps its value and gets no state."""
    used, unused = parameter(1.0, 2.0), parameter(5.0)
    optimizer = NSGDHess([used, unused], lr=0.1, seed=0)
    closure = Closure(optimizer, used, cubic)
    for _ in range(3):
        optimizer.step(closure)
    assert unused.item() == 5.0
    assert not optimizer.state[unused]


def test_missing_graph_raises_with_fix() -> None:
    """hvp="autograd" with a plain backward fails and names both fixes."""
    x = parameter(1.0, 2.0)
    optimizer = NSGDHess([x], lr=0.1, hvp="autograd")

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = cubic(x)
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="create_graph=True.*finite_difference"):
        optimizer.step(closure)


def test_closure_error_at_the_hessian_point_restores_x_t() -> None:
    """If the closure raises while the parameters sit at x̂_t, they are put back to x_t."""
    x = parameter(1.0, 2.0)
    optimizer = NSGDHess([x], lr=0.1, seed=0)
    optimizer.step(Closure(optimizer, x, cubic))
    x_t = x.detach().clone()

    def failing() -> Tensor:
        raise FloatingPointError("loss is not finite")

    with pytest.raises(FloatingPointError):
        optimizer.step(failing)
    assert torch.equal(x.detach(), x_t)


def test_step_without_closure_raises() -> None:
    """step() needs the closure (LBFGS contract)."""
    optimizer = NSGDHess([parameter(1.0)], lr=0.1)
    with pytest.raises(RuntimeError, match="closure"):
        optimizer.step()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"lr": 0.0}, "lr"),
        ({"lr": -1.0}, "lr"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"hvp": "exact"}, "hvp"),
        ({"fd_step": 0.0}, "fd_step"),
        ({"grad_clip": 0.0}, "grad_clip"),
        ({"hess_clip": -1.0}, "hess_clip"),
    ],
)
def test_bad_arguments_raise_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    """Out-of-range or unknown values raise ValueError naming the argument."""
    with pytest.raises(ValueError, match=field):
        ClipNSGDHess([parameter(1.0)], **kwargs)  # type: ignore[arg-type]


def test_bad_param_group_override_raises() -> None:
    """A per-group override is validated like the defaults."""
    with pytest.raises(ValueError, match="alpha"):
        NSGDHess([{"params": [parameter(1.0)], "alpha": 2.0}], lr=0.1)


@settings(max_examples=40, deadline=None)
@given(
    start=st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=6),
    lr=st.floats(1e-3, 10.0),
    alpha=st.floats(0.01, 1.0),
)
def test_every_step_has_length_gamma(start: list[float], lr: float, alpha: float) -> None:
    """Whatever the gradient, each NSGDHess step moves x by exactly γ (while g_t != 0)."""
    x = parameter(*start)
    weights = torch.linspace(0.5, 2.0, len(start), dtype=F64)
    optimizer = NSGDHess([x], lr=lr, alpha=alpha, seed=0)
    closure = Closure(optimizer, x, lambda y: (weights * (y - 0.25) ** 2).sum())
    for _ in range(3):
        before = x.detach().clone()
        optimizer.step(closure)
        if optimizer.state[x]["momentum"].norm() > 0:
            assert (x.detach() - before).norm().item() == pytest.approx(lr, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    gradient=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=6),
    grad_clip=st.floats(1e-3, 1e3),
)
def test_clipped_gradient_norm_is_min_of_norm_and_lambda(
    gradient: list[float], grad_clip: float
) -> None:
    """‖g0‖ = ‖clip(∇f(x0), λ)‖ = min{‖∇f(x0)‖, λ} for any gradient."""
    x = parameter(*([0.0] * len(gradient)))
    b = torch.tensor(gradient, dtype=F64)
    optimizer = ClipNSGDHess([x], lr=0.1, grad_clip=grad_clip, hvp="finite_difference")
    optimizer.step(Closure(optimizer, x, lambda y: b @ y + half_squared_norm(y)))
    expected = min(b.norm().item(), grad_clip)
    assert optimizer.state[x]["momentum"].norm().item() == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("hvp", [*HVP_MODES, "auto"])
def test_cli_trains_reference_classifier(hvp: str, in_tmp_dir: Path) -> None:
    """`--optimizer optiforge.optimizers.NSGDHess` alone trains digits well above chance (0.1)."""
    cli = run_cli(
        *("fit", "--config", str(DEFAULT_CONFIG)),
        *("--optimizer", "optiforge.optimizers.NSGDHess"),
        "--optimizer.lr",
        "0.2",
        "--optimizer.hvp",
        hvp,
        "--trainer.max_epochs",
        "2",
        "--test_after_fit",
        "false",
        "--trainer.logger",
        "false",
        "--trainer.enable_progress_bar",
        "false",
    )
    optimizer = cli.trainer.optimizers[0]
    assert isinstance(optimizer, NSGDHess)
    assert optimizer.hvp == hvp
    assert float(cli.trainer.callback_metrics["val/acc"]) > 0.3
