"""BayesCurvature: hand-computed steps, Adam limit, closure, param groups, state, bad input."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest
import torch

from optiforge.optimizers import BayesCurvature
from optiforge.optimizers.bayes_curvature import gamma_ratio
from tests.cli_helpers import DEFAULT_CONFIG, run_cli

F64 = torch.float64


def quadratic_step(optimizer: torch.optim.Optimizer, x: torch.Tensor, h: torch.Tensor) -> None:
    """Set x.grad = h * x (the gradient of ½ Σ h x²) and step."""
    x.grad = h * x.detach()
    optimizer.step()


def test_gamma_ratio_values() -> None:
    """Γ(a)/Γ(a-½): 0 at a <= ½, 1/√π at a = 1, √a asymptotically."""
    assert gamma_ratio(0.5) == 0.0
    assert gamma_ratio(0.2) == 0.0
    assert gamma_ratio(1.0) == pytest.approx(1 / math.sqrt(math.pi))
    assert gamma_ratio(1e4) == pytest.approx(math.sqrt(1e4), rel=1e-4)


def test_hand_computed_steps() -> None:
    """Two steps of the rule computed by hand (beta1 = 0, prior shape 1, prior rate 0.5)."""
    x = torch.tensor([1.0, -2.0], dtype=F64, requires_grad=True)
    h = torch.tensor([2.0, 0.5], dtype=F64)
    opt = BayesCurvature([x], lr=0.1, beta1=0.0, beta2=0.5, prior_shape=1.0, prior_rate=0.5)
    expected = x.detach().clone()
    a, b = 1.0, torch.full((2,), 0.5, dtype=F64)
    for _ in range(2):
        g = h * expected
        a, b = 0.5 * a + 0.5, 0.5 * b + 0.5 * g**2
        ratio = math.gamma(a) / math.gamma(a - 0.5)
        expected = expected - 0.1 * ratio * g / b.sqrt()
        quadratic_step(opt, x, h)
        torch.testing.assert_close(x.detach(), expected)
    assert opt.state[x]["shape"] == pytest.approx(a)


def test_first_step_is_zero_without_prior_counts() -> None:
    """prior_shape 0: one gradient leaves E[sqrt(tau)] infinite, so the Bayes step is zero."""
    x = torch.tensor([1.0, 3.0], dtype=F64, requires_grad=True)
    opt = BayesCurvature([x], lr=0.1)
    quadratic_step(opt, x, torch.ones(2, dtype=F64))
    torch.testing.assert_close(x.detach(), torch.tensor([1.0, 3.0], dtype=F64))


def test_tends_to_adam() -> None:
    """On a constant gradient the step tends to Adam's lr · sign(g) times ≈ √(1 - 3/(4a)) -> 1."""
    x = torch.zeros(3, dtype=F64, requires_grad=True)
    g = torch.tensor([0.3, -2.0, 5.0], dtype=F64)
    opt = BayesCurvature([x], lr=1e-3, beta2=0.9)
    for _ in range(300):
        before = x.detach().clone()
        x.grad = g.clone()
        opt.step()
    # a_t -> ½ / (1 - beta2) and b_t -> a_t g², so the step is lr · Γ(a)/(Γ(a-½) √a) · sign(g)
    a = 0.5 / (1 - 0.9)
    factor = gamma_ratio(a) / math.sqrt(a)
    torch.testing.assert_close(x.detach() - before, -1e-3 * factor * g.sign())
    assert factor == pytest.approx(math.sqrt(1 - 0.75 / a), abs=0.005)  # Γ-ratio expansion


def test_closure_and_param_groups() -> None:
    """The closure's loss is returned; each group uses its own lr; None gradients are skipped."""
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    frozen = torch.ones(1, requires_grad=True)
    opt = BayesCurvature(
        [{"params": [a]}, {"params": [b], "lr": 0.5}, {"params": [frozen]}],
        lr=0.1,
        prior_shape=1.0,
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = (a**2).sum() + (b**2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(4.0)
    step_a, step_b = 1.0 - a.detach(), 1.0 - b.detach()
    torch.testing.assert_close(step_b, 5.0 * step_a)
    assert frozen.item() == 1.0 and frozen not in opt.state


def test_state_dict_round_trip() -> None:
    """A reloaded optimizer continues with exactly the same steps."""
    h = torch.tensor([1.0, 4.0, 0.25], dtype=F64)
    x = torch.tensor([1.0, -1.0, 2.0], dtype=F64, requires_grad=True)
    opt = BayesCurvature([x], lr=0.05, weight_decay=0.01)
    for _ in range(3):
        quadratic_step(opt, x, h)
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    y = x.detach().clone().requires_grad_(True)
    copy = BayesCurvature([y], lr=0.05, weight_decay=0.01)
    buffer.seek(0)
    copy.load_state_dict(torch.load(buffer, weights_only=True))
    for _ in range(3):
        quadratic_step(opt, x, h)
        quadratic_step(copy, y, h)
    torch.testing.assert_close(y.detach(), x.detach(), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("lr", 0.0),
        ("lr", -1.0),
        ("beta1", 1.0),
        ("beta2", 0.0),
        ("beta2", 1.0),
        ("prior_shape", -0.1),
        ("prior_rate", 0.0),
        ("weight_decay", -1e-4),
    ],
)
def test_bad_input_names_the_field(field: str, value: float) -> None:
    """Out-of-range hyperparameters raise ValueError naming the field."""
    with pytest.raises(ValueError, match=f"^{field} must"):
        BayesCurvature([torch.zeros(1, requires_grad=True)], **{field: value})


@pytest.mark.slow
def test_cli_trains_reference_classifier(in_tmp_dir: Path) -> None:
    """`--optimizer optiforge.optimizers.BayesCurvature` trains the digits CNN well above chance
    (0.1)."""
    cli = run_cli(
        "fit",
        "--config",
        str(DEFAULT_CONFIG),
        "--optimizer",
        "optiforge.optimizers.BayesCurvature",
        "--optimizer.lr",
        "0.01",
        "--trainer.max_epochs",
        "2",
        "--test_after_fit",
        "false",
        "--trainer.logger",
        "false",
        "--trainer.enable_progress_bar",
        "false",
    )
    assert isinstance(cli.trainer.optimizers[0], BayesCurvature)
    assert float(cli.trainer.callback_metrics["val/acc"]) > 0.3
