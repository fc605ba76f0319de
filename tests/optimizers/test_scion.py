"""Scion family: hand-computed steps, the clipping switch at rho, closure, state, validation."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn

from optiforge.optimizers import ClippedScion, Scion, UnconstrainedClippedScion, UnconstrainedScion
from tests.cli_helpers import DEFAULT_CONFIG, run_cli

ALL = [Scion, UnconstrainedScion, ClippedScion, UnconstrainedClippedScion]
CLIPPED = [ClippedScion, UnconstrainedClippedScion]
CONSTRAINED = [Scion, ClippedScion]


def matrix_parameter(
    rows: list[list[float]], grad: list[list[float]] | None = None
) -> nn.Parameter:
    """A float32 parameter with its gradient already set (as after a backward pass)."""
    p = nn.Parameter(torch.tensor(rows))
    if grad is not None:
        p.grad = torch.tensor(grad)
    return p


def test_unconstrained_scion_step_on_2x2_matches_hand_computation() -> None:
    """Sign, scale 2, lr 0.1, no momentum: x + 0.1 * 2 * (-sign(g) / 2)."""
    x = matrix_parameter([[1.0, 2.0], [3.0, 4.0]], grad=[[0.5, -1.0], [0.0, 2.0]])
    UnconstrainedScion([x], lr=0.1, momentum=1.0, norm="Sign", scale=2.0).step()
    torch.testing.assert_close(x.detach(), torch.tensor([[0.9, 2.1], [3.0, 3.9]]))


def test_scion_step_is_frank_wolfe_on_2x2() -> None:
    """Scion: (1 - lr) x + lr * scale * lmo(d) = 0.9 x + 0.1 * [[-1, 1], [0, -1]]."""
    x = matrix_parameter([[1.0, 2.0], [3.0, 4.0]], grad=[[0.5, -1.0], [0.0, 2.0]])
    Scion([x], lr=0.1, momentum=1.0, norm="Sign", scale=2.0).step()
    torch.testing.assert_close(x.detach(), torch.tensor([[0.8, 1.9], [2.7, 3.5]]))


def test_momentum_is_the_convex_average_of_gradients() -> None:
    """momentum 0.25: d1 = 0.25 g1, d2 = 0.75 d1 + 0.25 g2; the step follows -sign(d2) / 2."""
    x = matrix_parameter([[0.0, 0.0], [0.0, 0.0]], grad=[[1.0, -1.0], [1.0, 1.0]])
    optimizer = UnconstrainedScion([x], lr=1.0, momentum=0.25, norm="Sign")
    optimizer.step()
    x.grad = torch.tensor([[-3.0, -1.0], [1.0, -0.75]])
    before = x.detach().clone()
    optimizer.step()
    d2 = torch.tensor([[-0.5625, -0.4375], [0.4375, 0.0]])
    torch.testing.assert_close(optimizer.state[x]["momentum_buffer"], d2)
    torch.testing.assert_close(x.detach() - before, -torch.sign(d2) / 2)


# x = [[1, 0], [0, 0]], g = [[.5, -.5], [.25, -.25]], Sign (d_in = 2): u = -sign(g) / 2.
# Unconstrained: D = -<g, u> = 0.75.  Constrained: D = <g, x - u> = 1.25 (the Frank-Wolfe gap).
CLIP_X = [[1.0, 0.0], [0.0, 0.0]]
CLIP_G = [[0.5, -0.5], [0.25, -0.25]]
CLIP_U = torch.tensor([[-0.5, 0.5], [-0.5, 0.5]])
CLIP_D = {ClippedScion: 1.25, UnconstrainedClippedScion: 0.75}


def clipped_step(cls: type, rho: float, lr: float) -> Tensor:
    x = matrix_parameter(CLIP_X, grad=CLIP_G)
    cls([x], lr=lr, momentum=1.0, norm="Sign", rho=rho).step()
    return x.detach()


def expected_after(cls: type, lr: float, eta: float) -> Tensor:
    x, weight = torch.tensor(CLIP_X), torch.tensor(lr * eta)
    return x + weight * (CLIP_U - x) if cls is ClippedScion else x + weight * CLIP_U


@pytest.mark.parametrize("cls", CLIPPED)
@pytest.mark.parametrize(
    ("rho_over_d", "eta"),
    [
        (2.0, 0.5),  # far below rho: steepest-descent regime, eta = D / rho
        (1 + 1e-6, 1 / (1 + 1e-6)),  # just below rho: still D / rho < 1
        (1.0, 1.0),  # exactly at rho: eta = 1
        (1 - 1e-6, 1.0),  # just above rho: clipped to the full LMO step
        (0.01, 1.0),  # far above
    ],
)
def test_clip_switches_exactly_at_rho(cls: type, rho_over_d: float, eta: float) -> None:
    """eta = min(1, D / rho) against hand-computed D (0.75 unconstrained, 1.25 Frank-Wolfe gap)."""
    lr = 0.5
    after = clipped_step(cls, rho=CLIP_D[cls] * rho_over_d, lr=lr)
    torch.testing.assert_close(after, expected_after(cls, lr, eta), rtol=0, atol=1e-7)


@pytest.mark.parametrize("cls", CLIPPED)
def test_just_below_rho_differs_from_at_rho(cls: type) -> None:
    """A D 1e-6 below rho gives a measurably smaller step than D = rho (no off-by-one switch)."""
    below = clipped_step(cls, rho=CLIP_D[cls] * (1 + 1e-6), lr=1.0)
    at = clipped_step(cls, rho=CLIP_D[cls], lr=1.0)
    assert not torch.equal(below, at)
    torch.testing.assert_close(at, expected_after(cls, 1.0, 1.0), rtol=0, atol=0)


def test_dual_norm_sums_over_all_groups() -> None:
    """D = 0.75 (Sign group) + 8 (BiasRMS group, scale 2); rho = 17.5 gives eta = 0.5 in both."""
    w = matrix_parameter(CLIP_X, grad=CLIP_G)
    b = nn.Parameter(torch.zeros(4))
    b.grad = torch.ones(4)  # BiasRMS: u = -2 * sqrt(4) * g / ||g|| = -2 g, so -<g, u> = 8
    groups = [{"params": [w], "norm": "Sign"}, {"params": [b], "norm": "BiasRMS", "scale": 2.0}]
    UnconstrainedClippedScion(groups, lr=1.0, momentum=1.0, rho=17.5).step()
    torch.testing.assert_close(w.detach(), torch.tensor(CLIP_X) + 0.5 * CLIP_U)
    torch.testing.assert_close(b.detach(), torch.full((4,), -1.0))


def test_sharded_params_without_process_group_does_not_communicate() -> None:
    """sharded_params=True needs no process group on a single process (no all_reduce crash)."""
    x = matrix_parameter(CLIP_X, grad=CLIP_G)
    ClippedScion([x], lr=0.5, momentum=1.0, norm="Sign", rho=2.5, sharded_params=True).step()
    torch.testing.assert_close(x.detach(), expected_after(ClippedScion, 0.5, 0.5))


def least_squares(seed: int = 0) -> tuple[Tensor, Tensor]:
    """Inputs A [64, 8] and targets Y = A W*^T [64, 4], with ||W*||_2 = 0.5 (inside every ball)."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(64, 8, generator=generator)
    target = torch.randn(4, 8, generator=generator)
    target = 0.5 * target / torch.linalg.matrix_norm(target, ord=2)
    return inputs, inputs @ target.T


def make_closure(optimizer: torch.optim.Optimizer, model: nn.Module, inputs: Tensor, y: Tensor):
    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), y)
        loss.backward()
        return loss

    return closure


SETTINGS = {
    Scion: {"lr": 0.05},
    UnconstrainedScion: {"lr": 0.01},
    ClippedScion: {"lr": 0.2, "rho": 1.0},
    UnconstrainedClippedScion: {"lr": 0.05, "rho": 1.0},
}


@pytest.mark.parametrize("cls", ALL)
def test_loss_falls_on_least_squares(cls: type) -> None:
    """100 steps from W = 0 cut the least-squares loss by more than 20x (measured 50x-3000x)."""
    inputs, y = least_squares()
    model = nn.Linear(8, 4, bias=False)
    nn.init.zeros_(model.weight)
    optimizer = cls(model.parameters(), momentum=0.5, **SETTINGS[cls])
    closure = make_closure(optimizer, model, inputs, y)
    initial = closure().item()
    for _ in range(100):
        optimizer.step(closure)
    assert closure().item() < initial / 20


@pytest.mark.parametrize("cls", ALL)
def test_closure_runs_once_per_step_before_the_update(cls: type) -> None:
    """step(closure) calls it exactly once, with grad enabled, uses its fresh gradients and
    returns its loss; without a closure step returns None."""
    inputs, y = least_squares()
    model = nn.Linear(8, 4)
    optimizer = cls(model.parameters(), **SETTINGS[cls])
    calls: list[bool] = []
    inner = make_closure(optimizer, model, inputs, y)

    def closure() -> Tensor:
        calls.append(torch.is_grad_enabled())
        return inner()

    before = model.weight.detach().clone()
    with torch.no_grad():
        loss = optimizer.step(closure)
    assert calls == [True]
    assert isinstance(loss, Tensor) and loss.requires_grad
    assert not torch.equal(model.weight.detach(), before)
    assert optimizer.step() is None
    assert len(calls) == 1


def tiny_net() -> nn.Module:
    """Conv + Linear layers with biases, so Spectral (conv), BiasRMS and Sign all take part."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv1d(1, 3, 3), nn.Tanh(), nn.Flatten(), nn.Linear(18, 2))


def train(model: nn.Module, optimizer: torch.optim.Optimizer, steps: range) -> None:
    for step in steps:
        generator = torch.Generator().manual_seed(step)
        inputs, y = (
            torch.randn(16, 1, 8, generator=generator),
            torch.randn(16, 2, generator=generator),
        )
        optimizer.step(make_closure(optimizer, model, inputs, y))


def grouped(cls: type, model: nn.Module) -> torch.optim.Optimizer:
    conv, linear = model[0], model[3]
    groups = [
        {"params": [conv.weight], "norm": "Spectral", "norm_kwargs": {"steps": 3}},
        {"params": [linear.weight], "norm": "Sign", "scale": 4.0},
        {"params": [conv.bias, linear.bias], "norm": "BiasRMS", "scale": 0.5},
    ]
    extra = {"rho": 0.5} if cls in CLIPPED else {}
    return cls(groups, lr=0.05, momentum=0.3, **extra)


@pytest.mark.parametrize("cls", ALL)
def test_state_dict_round_trip_continues_identically(cls: type) -> None:
    """5 steps, save, load into a fresh optimizer and model, 5 more == 10 uninterrupted, exactly."""
    reference = tiny_net()
    optimizer = grouped(cls, reference)
    train(reference, optimizer, range(10))

    first = tiny_net()
    optimizer = grouped(cls, first)
    train(first, optimizer, range(5))
    buffer = io.BytesIO()
    torch.save({"model": first.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer)

    resumed = tiny_net()
    resumed.load_state_dict(saved["model"])
    fresh = grouped(cls, resumed)
    fresh.load_state_dict(saved["optimizer"])
    assert len(fresh.state) == 4
    train(resumed, fresh, range(5, 10))
    for got, want in zip(resumed.parameters(), reference.parameters(), strict=True):
        assert torch.equal(got, want)


def test_plain_params_default_to_auto_norm() -> None:
    """Plain `params` become one group with norm "auto" and the constructor's scale."""
    optimizer = ClippedScion(tiny_net().parameters(), scale=3.0)
    (group,) = optimizer.param_groups
    assert group["norm"] == "auto" and group["scale"] == 3.0 and group["norm_kwargs"] == {}


def test_parameters_without_gradient_are_left_alone() -> None:
    """A parameter whose grad is None is neither moved nor given state."""
    used = matrix_parameter(CLIP_X, grad=CLIP_G)
    unused = matrix_parameter([[1.0, 2.0], [3.0, 4.0]])
    optimizer = ClippedScion([used, unused], lr=0.5, norm="Sign")
    optimizer.step()
    assert torch.equal(unused.detach(), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert unused not in optimizer.state


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    [
        (ClippedScion, {"rho": 0.0}, "rho must be > 0, got 0.0"),
        (UnconstrainedClippedScion, {"rho": -1.0}, "rho must be > 0, got -1.0"),
        (UnconstrainedScion, {"lr": -0.1}, "lr must be >= 0, got -0.1"),
        (UnconstrainedClippedScion, {"lr": -1.0}, "lr must be >= 0"),
        (Scion, {"lr": -0.1}, r"lr must be in \[0.0, 1.0\], got -0.1"),
        (ClippedScion, {"lr": 1.5}, r"lr must be in \[0.0, 1.0\], got 1.5"),
        (Scion, {"momentum": 0.0}, r"momentum must be in \(0.0, 1.0\], got 0.0"),
        (UnconstrainedScion, {"momentum": 1.5}, r"momentum must be in \(0.0, 1.0\]"),
        (ClippedScion, {"scale": 0.0}, "scale must be > 0"),
        (Scion, {"norm": "frobenius"}, "norm must be one of .*'Spectral'.*got 'frobenius'"),
        (Scion, {"norm_kwargs": {"step": 3}}, "norm_kwargs \\['step'\\]"),
    ],
)
def test_bad_arguments_raise_naming_the_field(cls: type, kwargs: dict, message: str) -> None:
    """Every out-of-range constructor argument raises a ValueError naming the field."""
    with pytest.raises(ValueError, match=message):
        cls(tiny_net().parameters(), **kwargs)


def test_bad_param_group_is_named_and_not_added() -> None:
    """A bad per-group value names its group; a rejected add_param_group leaves no trace."""
    model = tiny_net()
    conv, linear = model[0], model[3]
    with pytest.raises(ValueError, match=r"param_groups\[1\]\.lr must be in"):
        Scion([{"params": [conv.weight]}, {"params": [linear.weight], "lr": 2.0}])
    optimizer = Scion([conv.weight])
    with pytest.raises(ValueError, match=r"param_groups\[1\]\.params\[0\]: norm 'Spectral'"):
        optimizer.add_param_group({"params": [linear.bias], "norm": "Spectral"})
    with pytest.raises(ValueError, match=r"param_groups\[1\]\.norm must be one of"):
        optimizer.add_param_group({"params": [linear.weight], "norm": "l2"})
    assert len(optimizer.param_groups) == 1


CONSTRAINED_CLI = [
    "--optimizer.lr",
    "0.02",
    "--optimizer.scale",
    "8",
    "--optimizer.momentum",
    "0.3",
]
CLI_ARGS = {
    Scion: CONSTRAINED_CLI,
    UnconstrainedScion: ["--optimizer.lr", "0.2"],
    ClippedScion: [*CONSTRAINED_CLI, "--optimizer.rho", "16"],
    UnconstrainedClippedScion: [
        *["--optimizer.lr", "0.2", "--optimizer.momentum", "0.3", "--optimizer.rho", "1"]
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.__name__)
def test_cli_fit_on_reference_classifier(cls: type, in_tmp_dir: Path) -> None:
    """`--optimizer optimizers.<Class>` alone trains the digits CNN: 2 epochs reach val/acc
    > 0.75, chance being 0.1 (measured 0.86-0.94)."""
    cli = run_cli(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--optimizer",
        f"optiforge.optimizers.{cls.__name__}",
        *CLI_ARGS[cls],
        "--trainer.max_epochs",
        "2",
        "--test_after_fit",
        "false",
        "--trainer.logger",
        "false",
        "--trainer.enable_checkpointing",
        "true",
        "--trainer.enable_progress_bar",
        "false",
    )
    assert type(cli.trainer.optimizers[0]) is cls
    assert float(cli.trainer.callback_metrics["val/acc"]) > 0.75
