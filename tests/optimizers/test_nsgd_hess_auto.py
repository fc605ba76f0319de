"""NSGDHess's default hvp="auto": which HVP path it takes, when, and across a resume."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.optimizers import NSGDHess
from tests.optimizers.test_nsgd_hess import Closure, cubic, parameter

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
)


def test_is_second_order_follows_the_mode() -> None:
    """hvp="autograd" and (outside DDP) "auto" ask the train loop for create_graph=True."""
    assert NSGDHess([parameter(1.0)], hvp="autograd").is_second_order
    assert NSGDHess([parameter(1.0)], hvp="auto").is_second_order
    assert not NSGDHess([parameter(1.0)], hvp="finite_difference").is_second_order


class PlainClosure(Closure):
    """A closure whose backward never keeps the graph, whatever the optimizer asks."""

    def __call__(self) -> Tensor:
        self.calls += 1
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.x)
        loss.backward()
        return loss.detach()


@settings(max_examples=20, deadline=None)
@given(
    start=st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=5),
    alpha=st.floats(0.05, 1.0),
    keeps_graph=st.booleans(),
)
def test_auto_takes_exactly_the_path_the_closure_allows(
    start: list[float], alpha: float, keeps_graph: bool
) -> None:
    """hvp="auto" reproduces "autograd" bit for bit when the closure keeps the graph and
    "finite_difference" when it does not, with as many closure calls."""
    trajectories, counts = [], []
    reference = "autograd" if keeps_graph else "finite_difference"
    closure_class = Closure if keeps_graph else PlainClosure
    for hvp in ("auto", reference):
        x = parameter(*start)
        optimizer = NSGDHess([x], lr=0.1, alpha=alpha, hvp=hvp, seed=0)
        closure = closure_class(optimizer, x, cubic)
        for _ in range(4):
            optimizer.step(closure)
        trajectories.append(x.detach().clone())
        counts.append(closure.calls)
    assert torch.equal(*trajectories)
    assert counts[0] == counts[1]


def test_auto_resumes_on_the_path_it_had_learnt() -> None:
    """The state dict carries whether the closure kept the graph: a resumed "auto" optimizer
    takes the exact path at once, with 2 closure calls."""
    x = parameter(1.0, 2.0)
    first = NSGDHess([x], lr=0.1, seed=0)
    first.step(Closure(first, x, cubic))
    second = NSGDHess([x], lr=0.1, seed=0)
    second.load_state_dict(first.state_dict())
    assert second.hvp_method() == "autograd"
    closure = Closure(second, x, cubic)
    second.step(closure)
    assert closure.calls == 2
