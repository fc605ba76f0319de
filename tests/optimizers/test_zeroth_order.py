"""TelescopingZO and MeZO: hand-computed steps, exact restoration, seeds, no autograd, state."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.optimizers import MeZO, TelescopingZO
from optiforge.optimizers.zo_perturbation import SeededDirection, derive_seed, perturbed

H = torch.tensor([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], dtype=torch.float64)
B = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)


def quadratic(w: torch.Tensor) -> torch.Tensor:
    """0.5 w^T H w + b^T w, gradient H w + b."""
    return 0.5 * w @ H @ w + B @ w


def regenerated(seed: int, step: int, rank: int, k: int, shape, sphere: bool) -> torch.Tensor:
    """The direction of (seed, step, rank, k), drawn here independently of the optimizer."""
    generator = torch.Generator().manual_seed(derive_seed(seed, step, rank, k, 0))
    z = torch.randn(shape, generator=generator, dtype=torch.float64)
    return z * (z.numel() ** 0.5 / z.norm()) if sphere else z


def test_mezo_step_is_the_central_difference_update() -> None:
    """One MeZO step: w <- w (1 - lr wd) - lr (f(w + eps z) - f(w - eps z)) / (2 eps) z."""
    w0 = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    w = torch.nn.Parameter(w0.clone())
    optimizer = MeZO([w], lr=0.05, eps=1e-2, weight_decay=0.1, seed=7)
    optimizer.step(lambda: quadratic(w))
    z = regenerated(7, 0, 0, 0, (3,), sphere=False)
    g = (quadratic(w0 + 1e-2 * z) - quadratic(w0 - 1e-2 * z)) / 2e-2
    torch.testing.assert_close(w.detach(), w0 * (1 - 0.05 * 0.1) - 0.05 * g * z)


@pytest.mark.parametrize("schedule", ["geometric", "zipf"])
def test_p4_step_on_a_quadratic_is_the_exact_directional_gradient(schedule: str) -> None:
    """P4 is exact on quadratics: two directions give w - lr mean_k (v_k^T grad) v_k."""
    w0 = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    w = torch.nn.Parameter(w0.clone())
    optimizer = TelescopingZO(
        [w], lr=0.1, construction="P4", schedule=schedule, mu=0.05, directions=2, seed=3
    )
    optimizer.step(lambda: quadratic(w))
    grad = H @ w0 + B
    vs = [regenerated(3, 0, 0, k, (3,), sphere=True) for k in range(2)]
    expected = w0 - 0.1 * sum((v @ grad) * v for v in vs) / 2
    torch.testing.assert_close(w.detach(), expected, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("optimizer_class", [MeZO, TelescopingZO])
def test_zero_lr_step_restores_the_weights_bit_exactly(optimizer_class, device: str) -> None:
    """With lr = 0 every perturbation is undone exactly (torch.equal), float32 weights."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    model = model.to(device)
    before = [p.detach().clone() for p in model.parameters()]
    x = torch.randn(8, 16, device=device)
    optimizer = optimizer_class(model.parameters(), lr=0.0, directions=3)
    for _ in range(3):
        optimizer.step(lambda: model(x).square().mean())
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters(), strict=True))
    assert optimizer.restored_entries > 0  # plain (w + d) - d would not have been exact


@given(st.floats(1e-6, 10.0), st.integers(0, 2**31), st.sampled_from(["sphere", "gaussian"]))
def test_perturbation_is_undone_exactly_for_any_offset(offset: float, seed: int, kind) -> None:
    """Inside the block the weights are w + t v (to rounding); after it, exactly w."""
    torch.manual_seed(1)
    params = [torch.randn(50) * 1e-3, torch.randn(7, 3), torch.zeros(4)]
    before = [p.clone() for p in params]
    direction = SeededDirection(params, seed, kind)
    steps = [s.clone().view_as(p) for p, _, s in direction.scaled(offset)]
    with perturbed(direction, offset):
        for p, b, s in zip(params, before, steps, strict=True):
            torch.testing.assert_close(p, b + s)
    assert all(torch.equal(p, b) for p, b in zip(params, before, strict=True))
    if kind == "sphere":
        total = torch.cat([s.flatten() for s in steps]) / offset
        assert float(total.norm()) == pytest.approx(total.numel() ** 0.5, rel=1e-5)


def test_closure_runs_without_autograd() -> None:
    """Every closure call sees grad mode off and returns a loss with no graph."""
    w = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    seen = []

    def closure() -> torch.Tensor:
        loss = quadratic(w)
        seen.append((torch.is_grad_enabled(), loss.requires_grad, loss.grad_fn))
        return loss

    TelescopingZO([w], construction="P4").step(closure)
    assert seen and all(entry == (False, False, None) for entry in seen)
    assert w.grad is None


def test_a_closure_that_runs_backward_is_refused() -> None:
    """A backward inside the closure (Lightning without OptimizerAdapter) raises, naming it."""
    w = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))

    def closure() -> torch.Tensor:
        with torch.enable_grad():
            loss = quadratic(w)
            loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="optiforge.callbacks.OptimizerAdapter"):
        MeZO([w]).step(closure)


def run(optimizer_class, seed: int, steps: int, state=None, **kwargs) -> tuple[torch.Tensor, dict]:
    """`steps` steps on the quadratic from w = 1 (or from a saved (weights, state))."""
    start = torch.ones(3, dtype=torch.float64) if state is None else state[0]
    w = torch.nn.Parameter(start.clone())
    optimizer = optimizer_class([w], lr=0.05, seed=seed, **kwargs)
    if state is not None:
        optimizer.load_state_dict(state[1])
    for _ in range(steps):
        optimizer.step(lambda: quadratic(w))
    return w.detach().clone(), optimizer.state_dict()


@pytest.mark.parametrize(
    ("optimizer_class", "kwargs"),
    [(MeZO, {}), (TelescopingZO, {"construction": "P3", "schedule": "zipf"})],
)
def test_seeded_runs_reproduce_and_state_dict_resumes(optimizer_class, kwargs) -> None:
    """Same seed, same weights; another seed differs; 3 steps + state_dict + 2 steps equals 5."""
    five, _ = run(optimizer_class, 11, 5, **kwargs)
    assert torch.equal(five, run(optimizer_class, 11, 5, **kwargs)[0])
    assert not torch.equal(five, run(optimizer_class, 12, 5, **kwargs)[0])
    three, state = run(optimizer_class, 11, 3, **kwargs)
    assert state["zo_steps"] == 3
    assert torch.equal(five, run(optimizer_class, 11, 2, state=(three, state), **kwargs)[0])


def test_parameters_frozen_at_construction_stay_untouched() -> None:
    """A parameter with requires_grad=False when the optimizer is built is neither perturbed
    into the loss nor updated, nor decayed, even after requires_grad is switched off for all."""
    a = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    b = torch.nn.Parameter(torch.ones(2, dtype=torch.float64), requires_grad=False)
    seen_b = []

    def closure() -> torch.Tensor:
        seen_b.append(b.detach().clone())
        return (a * a).sum() + (b * b).sum()

    optimizer = TelescopingZO([a, b], lr=0.1, construction="P4", weight_decay=0.5)
    a.requires_grad_(False)  # what optiforge.callbacks.OptimizerAdapter does
    optimizer.step(closure)
    assert all(torch.equal(v, torch.ones(2, dtype=torch.float64)) for v in seen_b)
    assert torch.equal(b.detach(), torch.ones(2, dtype=torch.float64))
    assert not torch.equal(a.detach(), torch.ones(3, dtype=torch.float64))


def test_param_groups_use_their_own_lr() -> None:
    """A group with lr 0 stays put while the other group moves."""
    a = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    b = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    optimizer = MeZO([{"params": [a]}, {"params": [b], "lr": 0.0}], lr=0.1)
    optimizer.step(lambda: (a * a).sum() + (b * b).sum())
    assert torch.equal(b.detach(), torch.ones(2, dtype=torch.float64))
    assert not torch.equal(a.detach(), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda p: TelescopingZO(p, mu=0.0), "mu"),
        (lambda p: TelescopingZO(p, mu=-1e-3), "mu"),
        (lambda p: MeZO(p, eps=0.0), "eps"),
        (lambda p: MeZO(p, directions=0), "directions"),
        (lambda p: TelescopingZO(p, directions=0), "directions"),
        (lambda p: MeZO(p, directions=1.5), "directions"),
        (lambda p: MeZO(p, seed=-1), "seed"),
        (lambda p: TelescopingZO(p, schedule="geometric", ratio=1.0), "ratio"),
        (lambda p: TelescopingZO(p, schedule="zipf", exponent=1.5), "exponent"),
        (lambda p: TelescopingZO(p, construction="P5"), "construction"),
        (lambda p: TelescopingZO(p, schedule="harmonic"), "schedule"),
        (lambda p: MeZO(p, lr=-0.1), "lr"),
        (lambda p: MeZO([{"params": p, "weight_decay": -1.0}]), "weight_decay"),
    ],
)
def test_bad_arguments_fail_naming_the_argument(build, field: str) -> None:
    """mu <= 0, zero directions, non-summable schedules, unknown names, negative lr: ValueError."""
    with pytest.raises(ValueError, match=f"^{field} must"):
        build([torch.nn.Parameter(torch.ones(2))])
