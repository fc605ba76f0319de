"""SAM family with the signature of the common SAM implementations: base-optimizer keywords
after SAM's own, equal to the partial form, validated by name."""

from __future__ import annotations

import copy
import functools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.optimizers.msam import MSAM
from optiforge.optimizers.nsam import NSAM
from optiforge.optimizers.rwsam import RWSAM
from optiforge.optimizers.sam import SAM
from tests.optimizers.test_sam import contract_closure

VARIANT_ARGS = [
    (SAM, {}),
    (MSAM, {"micro_batch_size": 4}),
    (NSAM, {"descent_batch_size": 8}),
    (RWSAM, {"temperature": 0.5}),
]


@pytest.mark.parametrize(("variant", "kwargs"), VARIANT_ARGS, ids=["SAM", "MSAM", "NSAM", "RWSAM"])
def test_base_optimizer_keywords_equal_a_partial(variant, kwargs) -> None:
    """`variant(params, torch.optim.SGD, rho=..., lr=..., momentum=...)` (davda54/sam's form)
    builds the base optimizer with those keywords: 3 steps equal the partial form bit for bit."""
    torch.manual_seed(1)
    model_a = torch.nn.Linear(3, 1)
    model_b = copy.deepcopy(model_a)
    keywords = variant(
        model_a.parameters(), torch.optim.SGD, rho=0.1, lr=0.05, momentum=0.9, **kwargs
    )
    partial = variant(
        model_b.parameters(),
        functools.partial(torch.optim.SGD, lr=0.05, momentum=0.9),
        rho=0.1,
        **kwargs,
    )
    assert keywords.param_groups[0]["lr"] == 0.05
    assert keywords.param_groups[0]["momentum"] == 0.9
    for _ in range(3):
        keywords.step(contract_closure(model_a, keywords, []))
        partial.step(contract_closure(model_b, partial, []))
    for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(a, b)


@settings(max_examples=30, deadline=None)
@given(
    lr=st.floats(0.0, 10.0),
    momentum=st.floats(0.0, 0.99),
    weight_decay=st.floats(0.0, 1.0),
)
def test_keywords_and_partial_build_the_same_groups(
    lr: float, momentum: float, weight_decay: float
) -> None:
    """For any valid base values, the keyword form and the partial form give equal groups."""
    values = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay}
    by_keywords = SAM([torch.zeros(2, requires_grad=True)], torch.optim.SGD, **values)
    by_partial = SAM(
        [torch.zeros(2, requires_grad=True)], functools.partial(torch.optim.SGD, **values)
    )
    groups = [
        {k: v for k, v in optimizer.param_groups[0].items() if k != "params"}
        for optimizer in (by_keywords, by_partial)
    ]
    assert groups[0] == groups[1]
    assert {k: groups[0][k] for k in values} == values


@settings(max_examples=30, deadline=None)
@given(lr=st.floats(max_value=-1e-12, allow_nan=False, allow_infinity=False))
def test_any_negative_base_lr_is_refused_naming_the_field(lr: float) -> None:
    """Every negative base lr, as a keyword or in a partial, raises naming base_optimizer.lr."""
    for build in (
        lambda p: RWSAM(p, torch.optim.SGD, lr=lr),
        lambda p: NSAM(p, functools.partial(torch.optim.SGD, lr=lr)),
    ):
        with pytest.raises(ValueError, match=r"^base_optimizer\.lr must be >= 0, got "):
            build([torch.zeros(2, requires_grad=True)])


def test_keywords_override_the_partial() -> None:
    """A keyword given to SAM wins over the same keyword in the base optimizer's partial."""
    w = torch.zeros(2, requires_grad=True)
    optimizer = SAM([w], functools.partial(torch.optim.SGD, lr=0.5, momentum=0.9), lr=0.2)
    assert (optimizer.param_groups[0]["lr"], optimizer.param_groups[0]["momentum"]) == (0.2, 0.9)
