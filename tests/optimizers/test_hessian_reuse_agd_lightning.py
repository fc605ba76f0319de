"""HessianReuseAGD under Lightning's automatic optimization: one closure call per step, the
Hessian from the closure's graph, the same iterates as the solver on f."""

from __future__ import annotations

import lightning as L
import pytest
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.optimizers import HessianReuseAGD, hessian_reuse_agd

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
)

F64 = torch.float64
A = torch.tensor([[3.0, 1.0, 0.0], [1.0, -1.0, 0.5], [0.0, 0.5, 2.0]], dtype=F64)
X0 = torch.tensor([0.5, 1.0, -1.0], dtype=F64)
STEPS = 6
OPTIONS = {"eps": 1e-30, "n_hessian": 2, "lipschitz": 20.0, "delta": 0.5, "refresh_distance": 0.2}


def f(w: Tensor) -> Tensor:
    """A nonconvex quartic: ½ wᵀAw (A indefinite) + ¼ Σ w⁴."""
    return 0.5 * w @ A @ w + 0.25 * (w**4).sum()


class Quartic(L.LightningModule):
    """f as a module that honours `is_second_order` in its backward; counts closure calls."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(X0.clone())
        self.calls = 0

    def training_step(self, batch: list[Tensor], batch_idx: int) -> Tensor:
        self.calls += 1
        return f(self.w)

    def backward(self, loss: Tensor, *args: object, **kwargs: object) -> None:
        if any(getattr(o, "is_second_order", False) for o in self.trainer.optimizers):
            kwargs["create_graph"] = True
        loss.backward(*args, **kwargs)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return HessianReuseAGD(self.parameters(), **OPTIONS)


def test_lightning_run_equals_the_solver() -> None:
    """STEPS Lightning steps = the solver with STEPS gradient queries: same point, same counts
    (one closure call per step; Hessians from the closure's graph = torch.func Hessians)."""
    module = Quartic()
    trainer = quiet_trainer(1)
    trainer.fit(module, DataLoader(TensorDataset(torch.zeros(STEPS, 1)), batch_size=1))
    solved = hessian_reuse_agd(f, X0, max_gradient_calls=STEPS, **OPTIONS)
    used = trainer.optimizers[0]
    assert module.calls == STEPS
    assert used.counts == solved.counts and solved.counts.hessian >= 1
    assert not torch.equal(solved.x, X0)
    torch.testing.assert_close(module.w.detach(), solved.x, atol=1e-12, rtol=0)
