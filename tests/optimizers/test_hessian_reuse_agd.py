"""Hessian-reuse AGD: φ by hand, exact oracle counts, quadratics, Rosenbrock, optimizer = solver,
state round trip, reproducibility, cubic-Newton step, bad input by name."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.benchmarks.nonconvex_functions import rosenbrock
from optiforge.optimizers import HessianReuseAGD, hessian_reuse_agd
from optiforge.optimizers.critical_or_progress import (
    CriticalOrProgress,
    curvature_scale,
    reuse_schedule,
)
from optiforge.optimizers.critical_point_baselines import cubic_step, gradient_descent

F64 = torch.float64


def quadratic(seed: int, eigenvalues: list[float]) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
    """(A, f) with f(x) = ½ xᵀAx, A = Q diag(eigenvalues) Qᵀ for a seeded random rotation Q."""
    generator = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(len(eigenvalues), len(eigenvalues), generator=generator))
    a = (q.to(F64) * torch.tensor(eigenvalues, dtype=F64)) @ q.to(F64).T
    return a, lambda x: 0.5 * x @ a @ x


def test_curvature_scale_by_hand() -> None:
    """φ at L₁ = 8, δ = 1: 3 log levels; λ = 0 -> 32·3, λ = 8 -> 40, λ = -3 -> 35·3/2."""
    values = curvature_scale(torch.tensor([0.0, 8.0, -3.0], dtype=F64), 1.0, 8.0)
    assert values.tolist() == [96.0, 40.0, 52.5]
    assert curvature_scale(torch.tensor([0.0], dtype=F64), 1.0, 8.0, floor=1.0).item() == 3.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=6),
    st.floats(1e-4, 0.4),
    st.floats(0.1, 40.0),
)
def test_curvature_scale_bounds(fractions: list[float], delta: float, floor: float) -> None:
    """For |λ| <= L₁ = 1: floor·δ + |λ| <= φ(λ) <= (floor·δ + |λ|)·⌈log₂(L₁/δ)⌉."""
    eigenvalues = torch.tensor(fractions, dtype=F64)
    values = curvature_scale(eigenvalues, delta, 1.0, floor)
    base = floor * delta + eigenvalues.abs()
    assert torch.all(values >= base * (1 - 1e-12))
    assert torch.all(values <= base * math.ceil(math.log2(1.0 / delta)) * (1 + 1e-12))


def test_reuse_schedule() -> None:
    """r = D/n_H and δ = min(L₂ r, L₁/2); n_H = 0 uses no Hessian."""
    assert reuse_schedule(4, 2.0, 10.0, 100.0) == (5.0, 0.5)
    assert reuse_schedule(1, 2.0, 100.0, 100.0) == (50.0, 2.0)
    assert reuse_schedule(0, 2.0, 10.0, 100.0) == (50.0, math.inf)


def test_oracle_counts_are_exact() -> None:
    """Counts equal the calls of f made by the oracles: 7 gradients (budget), 2 Hessians (n_H)."""
    _, f = quadratic(0, [1.0, 2.0, 3.0])
    calls = [0]

    def counted(x: Tensor) -> Tensor:
        calls[0] += 1
        return f(x)

    x0 = torch.ones(3, dtype=F64)
    result = hessian_reuse_agd(
        counted, x0, eps=1e-30, n_hessian=2, lipschitz=4.0, delta=0.5, refresh_distance=1e-12,
        max_gradient_calls=7,
    )  # fmt: skip
    assert (result.counts.gradient, result.counts.hessian) == (7, 2)
    assert calls[0] == 9  # one traced call per gradient and per Hessian query
    assert len(result.grad_norms) == 7 and not result.converged
    steps = gradient_descent(f, x0, eps=1e-30, lipschitz=4.0, max_gradient_calls=5)
    assert (steps.counts.gradient, steps.counts.hessian) == (5, 0)


@pytest.mark.parametrize("n_hessian", [0, 1, 3])
def test_strongly_convex_quadratic_converges(n_hessian: int) -> None:
    """On ½ xᵀAx (eigenvalues 0.1-4) every budget reaches ‖∇f‖ <= 1e-8; the minimizer is 0."""
    a, f = quadratic(1, [0.1, 0.5, 1.0, 2.0, 4.0])
    delta, radius = reuse_schedule(n_hessian, 1.0, 1.0, 4.0)
    result = hessian_reuse_agd(
        f, torch.ones(5, dtype=F64), eps=1e-8, n_hessian=n_hessian, lipschitz=4.0, delta=delta,
        refresh_distance=radius, floor=1.0,
    )  # fmt: skip
    assert result.converged
    assert torch.linalg.vector_norm(a @ result.x) <= 1e-8
    assert torch.linalg.vector_norm(result.x) <= 1e-7


def test_exact_hessian_preconditioner_takes_a_newton_step() -> None:
    """Eigenvalues inside (L₁/2, L₁), L₁/δ = 2^20, floor 1: φ(λ) = λ + δ, so one step (η = 1, no
    momentum) leaves the gradient A(I - H̄⁻¹A)x₀, each eigencomponent shrunk by δ/(λ+δ)."""
    eigenvalues = [4.5, 5.0, 6.0, 7.0]
    a, f = quadratic(2, eigenvalues)
    delta = 8.0 / 2**20
    x0 = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=F64)
    core = CriticalOrProgress(1e-30, 1, 8.0, delta, math.inf, 1.0, 1.0, math.inf, 100, 1.0)
    core.set_hessian(x0, a)
    assert torch.allclose(core.state["scale"], torch.tensor(eigenvalues, dtype=F64) + delta)
    x1 = core.advance(x0, a @ x0)
    h_bar = a + delta * torch.eye(4, dtype=F64)
    assert torch.allclose(x1, x0 - torch.linalg.solve(h_bar, a @ x0), atol=1e-14)
    assert torch.linalg.vector_norm(a @ x1) <= delta / 4.5 * torch.linalg.vector_norm(a @ x0)
    g0 = float(torch.linalg.vector_norm(a @ x0))
    result = hessian_reuse_agd(
        f, x0, eps=1e-9 * g0, n_hessian=1, lipschitz=8.0, delta=delta, lr=1.0, momentum=1.0,
        floor=1.0,
    )  # fmt: skip
    assert result.converged and result.counts.gradient == 3 and result.counts.hessian == 1


def test_rosenbrock_two_dimensions() -> None:
    """From (-1.2, 1) with 8 reused Hessians the method reaches ‖∇f‖ <= 1e-6 near (1, 1)."""
    delta, radius = reuse_schedule(8, 4.0, 100.0, 2500.0)
    result = hessian_reuse_agd(
        rosenbrock, torch.tensor([-1.2, 1.0], dtype=F64), eps=1e-6, n_hessian=8,
        lipschitz=2500.0, delta=delta, refresh_distance=radius, floor=1.0,
    )  # fmt: skip
    assert result.converged and result.grad_norms[-1] <= 1e-6
    assert torch.allclose(result.x, torch.ones(2, dtype=F64), atol=1e-5)
    assert 1 <= result.counts.hessian <= 8


def run_optimizer(optimizer: HessianReuseAGD, x: Tensor, f: Callable[[Tensor], Tensor], steps: int):
    """`steps` optimizer steps with a closure that keeps the graph (for the Hessian queries)."""

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = f(x)
        loss.backward(create_graph=optimizer.is_second_order)
        return loss

    for _ in range(steps):
        optimizer.step(closure)


def test_optimizer_matches_solver() -> None:
    """Optimizer (Hessian from the closure's graph, split over two tensors) = solver (torch.func
    Hessian) step for step on a nonconvex function; counts agree."""
    a, _ = quadratic(3, [-1.0, 0.5, 2.0, 3.0])

    def f(x: Tensor) -> Tensor:
        return 0.5 * x @ a @ x + 0.25 * (x**4).sum()

    x0 = torch.tensor([0.3, -0.2, 0.4, 0.1], dtype=F64)
    options = {"eps": 1e-30, "n_hessian": 3, "lipschitz": 10.0, "delta": 0.1}
    solved = hessian_reuse_agd(f, x0, refresh_distance=0.05, max_gradient_calls=12, **options)
    head, tail = x0[:1].clone().requires_grad_(True), x0[1:].clone().requires_grad_(True)
    optimizer = HessianReuseAGD(
        [{"params": [head]}, {"params": [tail]}], refresh_distance=0.05, **options
    )
    run_optimizer(optimizer, head, lambda _: f(torch.cat([head, tail])), 12)
    assert torch.allclose(torch.cat([head, tail]).detach(), solved.x, atol=1e-12)
    assert optimizer.counts == solved.counts


def test_state_dict_round_trip() -> None:
    """5 steps, save, load into a fresh optimizer, 5 steps = 10 steps (iterate and counts)."""
    _, f = quadratic(4, [-0.5, 1.0, 3.0])
    options = {"n_hessian": 2, "lipschitz": 5.0, "delta": 0.1, "refresh_distance": 0.01}
    x = torch.tensor([1.0, 1.0, 1.0], dtype=F64, requires_grad=True)
    straight = HessianReuseAGD([x], **options)
    run_optimizer(straight, x, f, 10)
    y = torch.tensor([1.0, 1.0, 1.0], dtype=F64, requires_grad=True)
    first = HessianReuseAGD([y], **options)
    run_optimizer(first, y, f, 5)
    second = HessianReuseAGD([y], **options)
    second.load_state_dict(first.state_dict())
    run_optimizer(second, y, f, 5)
    assert torch.equal(x.detach(), y.detach())
    assert second.counts == straight.counts
    with pytest.raises(ValueError, match="critical_or_progress"):
        second.load_state_dict(torch.optim.SGD([y], lr=0.1).state_dict())


def test_seeded_runs_reproduce() -> None:
    """Two runs on the same seeded random nonconvex quadratic give identical iterates."""

    def run() -> Tensor:
        torch.manual_seed(7)
        a = torch.randn(6, 6, dtype=F64)
        x0 = torch.randn(6, dtype=F64)
        return hessian_reuse_agd(
            lambda x: 0.5 * x @ (a + a.T) @ x + (x**4).sum(), x0, eps=1e-6, n_hessian=2,
            lipschitz=50.0, delta=1.0, refresh_distance=0.1, max_gradient_calls=300,
        ).x  # fmt: skip

    assert torch.equal(run(), run())


def test_optimizer_needs_the_graph_for_a_hessian_query() -> None:
    """A plain closure (no create_graph) fails at the Hessian query with an explanation."""
    x = torch.ones(2, dtype=F64, requires_grad=True)
    optimizer = HessianReuseAGD([x], n_hessian=1)

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = (x**2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="create_graph=True"):
        optimizer.step(closure)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.1, 10.0))
def test_cubic_step_is_the_model_minimizer(seed: int, regularization: float) -> None:
    """s solves g + Hs + (M/2)‖s‖s = 0 with H + (M/2)‖s‖I ⪰ 0 (random indefinite H)."""
    generator = torch.Generator().manual_seed(seed)
    h = torch.randn(5, 5, generator=generator, dtype=F64)
    h = h + h.T
    g = torch.randn(5, generator=generator, dtype=F64)
    s = cubic_step(g, h, regularization)
    r = float(torch.linalg.vector_norm(s))
    assert torch.allclose(
        g + h @ s + regularization / 2 * r * s, torch.zeros(5, dtype=F64), atol=1e-8
    )
    assert torch.linalg.eigvalsh(h).min() + regularization * r / 2 >= -1e-8


def test_cubic_step_hard_case_by_hand() -> None:
    """H = diag(-2, 1), g = (0, 1), M = 2: r = 2, s = (√(4 - 1/9), -1/3)."""
    h = torch.diag(torch.tensor([-2.0, 1.0], dtype=F64))
    s = cubic_step(torch.tensor([0.0, 1.0], dtype=F64), h, 2.0)
    assert torch.allclose(s.abs(), torch.tensor([math.sqrt(4 - 1 / 9), 1 / 3], dtype=F64))
    assert s[1].item() == pytest.approx(-1 / 3)


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("n_hessian", {"n_hessian": -1}),
        ("n_hessian", {"n_hessian": 1.5}),
        ("n_hessian", {"n_hessian": True}),
        ("eps", {"eps": 0.0}),
        ("eps", {"eps": -1.0}),
        ("lr", {"lr": 0.0}),
        ("lr", {"lr": 1.5}),
        ("lipschitz", {"lipschitz": 0.0}),
        ("delta", {"delta": 0.0}),
        ("delta", {"delta": 6.0}),
        ("refresh_distance", {"refresh_distance": 0.0}),
        ("momentum", {"momentum": 0.0}),
        ("restart_range", {"restart_range": -1.0}),
        ("epoch_length", {"epoch_length": 0}),
        ("floor", {"floor": 0.0}),
    ],
)
def test_bad_arguments_name_the_field(field: str, change: dict) -> None:
    """Every out-of-range argument fails with a ValueError naming it."""
    options = {"eps": 1e-3, "n_hessian": 1, "lipschitz": 10.0, "delta": 0.1, **change}
    with pytest.raises(ValueError, match=field):
        HessianReuseAGD([torch.zeros(2, requires_grad=True)], **options)
    with pytest.raises(ValueError, match="max_gradient_calls"):
        hessian_reuse_agd(lambda x: x @ x, torch.ones(2), eps=1.0, n_hessian=0, lipschitz=2.0,
                          delta=0.5, max_gradient_calls=0)  # fmt: skip


def test_step_size_is_the_scheduled_group_lr() -> None:
    """StepLR drives η: 4 steps with lr 0.5 halved after every step equal the solver core
    advanced with η = 0.5, 0.25, 0.125, 0.0625; groups with different lrs are refused."""
    a, f = quadratic(4, [0.5, 1.0, 2.0])
    x = torch.ones(3, dtype=F64, requires_grad=True)
    optimizer = HessianReuseAGD([x], n_hessian=1, lipschitz=4.0, delta=0.1, lr=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    core = CriticalOrProgress(1e-3, 1, 4.0, 0.1, math.inf, 0.5, 0.1, math.inf, 100)
    y = torch.ones(3, dtype=F64)
    for step in range(4):
        run_optimizer(optimizer, x, f, 1)
        scheduler.step()
        core.lr = 0.5 / 2**step
        core.observe(a @ y)
        if core.needs_hessian(y):
            core.set_hessian(y, a)
        y = core.advance(y, a @ y)
    torch.testing.assert_close(x.detach(), y, rtol=0, atol=1e-12)
    assert optimizer.param_groups[0]["lr"] == 0.5 / 16
    w = torch.ones(1, dtype=F64, requires_grad=True)
    split = HessianReuseAGD([{"params": [x]}, {"params": [w], "lr": 0.1}])
    with pytest.raises(ValueError, match=r"param_groups\[\*\]\.lr must be equal"):
        split.step(lambda: f(x) + w.sum())
