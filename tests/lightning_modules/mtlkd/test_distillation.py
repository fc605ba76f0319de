"""Per-step distillation loss: hand-computed KL, temperature, direction, masking."""

from __future__ import annotations

import math

import pytest
import torch

from optiforge.lightning_modules.mtlkd.distillation import distillation_kl


def test_forward_kl_equals_a_hand_computed_value() -> None:
    """Two legal actions, teacher (0.75, 0.25), student (0.5, 0.5), third action illegal:
    KL(T || S) = 0.75 ln 1.5 + 0.25 ln 0.5; reverse = 0.5 ln(0.5/0.75) + 0.5 ln(0.5/0.25)."""
    teacher = torch.tensor([[math.log(0.75), math.log(0.25), -math.inf]])
    student = torch.tensor([[math.log(0.5), math.log(0.5), -math.inf]])
    legal = torch.tensor([[True, True, False]])
    forward = distillation_kl(student, teacher, legal)
    reverse = distillation_kl(student, teacher, legal, direction="reverse")
    assert forward.item() == pytest.approx(0.75 * math.log(1.5) + 0.25 * math.log(0.5), abs=1e-7)
    assert reverse.item() == pytest.approx(
        0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25), abs=1e-7
    )


def test_temperature_softens_both_and_scales_by_tau_squared() -> None:
    """At tau = 2 the targets are softmax(log p / 2): teacher (0.75, 0.25) becomes
    (sqrt 3, 1) / (sqrt 3 + 1); student uniform stays uniform; the loss is 4 KL of those."""
    teacher = torch.tensor([[math.log(0.75), math.log(0.25)]])
    student = torch.tensor([[math.log(0.5), math.log(0.5)]])
    q = torch.tensor([math.sqrt(3), 1.0]) / (math.sqrt(3) + 1)
    expected = 4 * float((q * (q / 0.5).log()).sum())
    value = distillation_kl(student, teacher, torch.ones(1, 2, dtype=torch.bool), temperature=2.0)
    assert value.item() == pytest.approx(expected, abs=1e-6)


def test_equal_distributions_and_single_legal_actions_give_zero() -> None:
    """KL(p || p) = 0; a row whose only legal action is the depot contributes exactly 0 even if
    the illegal entries hold garbage."""
    log_p = torch.log_softmax(torch.randn(4, 6), -1)
    legal = torch.ones(4, 6, dtype=torch.bool)
    assert torch.allclose(distillation_kl(log_p, log_p, legal), torch.zeros(4), atol=1e-6)
    only_depot = torch.zeros(1, 3, dtype=torch.bool)
    only_depot[0, 0] = True
    value = distillation_kl(torch.randn(1, 3), torch.randn(1, 3), only_depot)
    assert value.item() == 0.0


def test_gradient_matches_cross_entropy_to_soft_labels() -> None:
    """The forward KL's gradient w.r.t. the student's logits is softmax(student) - teacher."""
    logits = torch.randn(3, 5, requires_grad=True)
    teacher = torch.log_softmax(torch.randn(3, 5), -1)
    loss = distillation_kl(torch.log_softmax(logits, -1), teacher, torch.ones(3, 5, dtype=bool))
    loss.sum().backward()
    expected = torch.softmax(logits.detach(), -1) - teacher.exp()
    assert torch.allclose(logits.grad, expected, atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"temperature": 0.0}, "temperature must be > 0"), ({"direction": "both"}, "direction")],
)
def test_bad_arguments_fail(kwargs: dict, message: str) -> None:
    """distillation_kl rejects temperature 0 and an unknown direction."""
    log_p = torch.zeros(1, 2)
    with pytest.raises(ValueError, match=message):
        distillation_kl(log_p, log_p, torch.ones(1, 2, dtype=torch.bool), **kwargs)
