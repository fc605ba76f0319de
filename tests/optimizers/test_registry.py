"""The registry lists every optimizer the package exports and builds each by name."""

from __future__ import annotations

import pytest
import torch

import optiforge.optimizers as optimizers
from optiforge.optimizers import LoopNeeds, available, create, needs
from optiforge.optimizers.registry import optimizer_class


def exported_optimizer_classes() -> set[str]:
    """Names in `optiforge.optimizers.__all__` that are torch.optim.Optimizer subclasses."""
    return {
        name
        for name in optimizers.__all__
        if isinstance(getattr(optimizers, name), type)
        and issubclass(getattr(optimizers, name), torch.optim.Optimizer)
    }


def test_available_is_every_exported_optimizer() -> None:
    """No exported optimizer is missing from the registry, and it lists nothing else."""
    assert set(available()) == exported_optimizer_classes()
    assert available() == sorted(available())


@pytest.mark.parametrize("name", available())
def test_every_class_declares_its_loop_needs(name: str) -> None:
    """Each registered class is the exported one and carries a LoopNeeds declaration."""
    cls = optimizer_class(name)
    assert cls is getattr(optimizers, name)
    assert isinstance(cls.loop_needs, LoopNeeds)
    assert needs(name) is cls.loop_needs


def test_create_matches_names_case_insensitively() -> None:
    """`create("sam", ...)` builds a SAM with the keyword arguments given."""
    optimizer = create("sam", [torch.zeros(2, requires_grad=True)], rho=0.2)
    assert type(optimizer).__name__ == "SAM"
    assert optimizer.param_groups[0]["rho"] == 0.2


def test_unknown_name_lists_the_valid_ones() -> None:
    """An unknown name raises a ValueError naming every valid one."""
    with pytest.raises(ValueError, match=r"must be one of \['BayesCurvature', .*got 'Adamm'"):
        create("Adamm", [torch.zeros(1, requires_grad=True)])


@pytest.mark.parametrize(
    ("clauses", "message"),
    [
        ({"extra_passes": True}, "extra_passes needs closure"),
        (
            {"closure": True, "extra_passes": True, "gradient_scaler": False, "reason": "x"},
            "extra_passes excludes accumulation",
        ),
        ({"closure": True}, "closure excludes gradient_scaler"),
        ({"ddp": "unsupported"}, "needs a reason"),
        ({"ddp": "sometimes"}, "ddp must be one of"),
    ],
)
def test_inconsistent_declarations_fail_at_definition(clauses: dict, message: str) -> None:
    """A declaration that contradicts itself, or refuses without a reason, raises at once."""
    with pytest.raises(ValueError, match=message):
        LoopNeeds(**clauses)
