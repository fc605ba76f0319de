"""NSGDHess / Clip NSGDHess with their defaults in LightningModules that know nothing of them."""

from __future__ import annotations

import math

import lightning as L
import pytest
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.callbacks.optimizer_adapter import OptimizerAdapter
from optiforge.optimizers.nsgd_hess import ClipNSGDHess, NSGDHess

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
)

F64 = torch.float64
A = torch.tensor([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], dtype=F64)
B = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
X0 = torch.tensor([0.5, 1.0, -1.0], dtype=F64)
LR, ALPHA, GRAD_CLIP, HESS_CLIP, STEPS = 0.3, 0.4, 2.0, 1.5, 4
OPTIMIZERS = {
    "NSGDHess": lambda params: NSGDHess(params, lr=LR, alpha=ALPHA),
    "ClipNSGDHess": lambda params: ClipNSGDHess(
        params, lr=LR, alpha=ALPHA, grad_clip=GRAD_CLIP, hess_clip=HESS_CLIP
    ),
}


class PlainQuadratic(L.LightningModule):
    """f(w) = ½ (w - b)ᵀ A (w - b) with Lightning's own backward; counts training_step calls."""

    def __init__(self, optimizer: str) -> None:
        super().__init__()
        self.optimizer = optimizer
        self.w = nn.Parameter(X0.clone())
        self.calls_per_step: list[int] = []

    def training_step(self, batch: list[Tensor], batch_idx: int) -> Tensor:
        step = self.trainer.global_step
        if len(self.calls_per_step) <= step:
            self.calls_per_step.append(0)
        self.calls_per_step[step] += 1
        d = self.w - B
        return 0.5 * d @ A @ d

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return OPTIMIZERS[self.optimizer](self.parameters())


class SecondOrderQuadratic(PlainQuadratic):
    """The same module honouring the `is_second_order` convention (timm) in its backward."""

    def backward(self, loss: Tensor, *args: object, **kwargs: object) -> None:
        if any(getattr(o, "is_second_order", False) for o in self.trainer.optimizers):
            kwargs["create_graph"] = True
        loss.backward(*args, **kwargs)


def clip(v: Tensor, level: float) -> Tensor:
    """clip(v, λ) = min{1, λ/‖v‖} v."""
    return v * min(1.0, level / v.norm().item())


def written_out(optimizer: str) -> Tensor:
    """The last of `iterates(optimizer)`: where STEPS steps of the method end."""
    return iterates(optimizer)[-1]


def iterates(optimizer: str) -> list[Tensor]:
    """x_0 .. x_STEPS of Alg. 1 / Alg. 2 on the quadratic, where ∇²f(x̂) v = A v for any q."""
    clipped = optimizer == "ClipNSGDHess"
    grad_clip = GRAD_CLIP if clipped else math.inf
    x_prev, x = None, X0.clone()
    xs = [x]
    g = torch.zeros(3, dtype=F64)
    for _ in range(STEPS):
        gradient = clip(A @ (x - B), grad_clip)
        if x_prev is None:
            g = gradient
        else:
            v = x - x_prev
            hessian_term = clip(A @ v, HESS_CLIP * v.norm().item()) if clipped else A @ v
            g = (1 - ALPHA) * (g + hessian_term) + ALPHA * gradient
        x_prev, x = x, x - LR * g / g.norm()
        xs.append(x)
    return xs


def fit(module: PlainQuadratic) -> L.Trainer:
    """STEPS optimizer steps under automatic optimization (one epoch of STEPS dummy batches)."""
    trainer = quiet_trainer(1)
    trainer.fit(module, DataLoader(TensorDataset(torch.zeros(STEPS, 1)), batch_size=1))
    return trainer


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize(
    ("module_class", "method", "calls"),
    [(PlainQuadratic, "finite_difference", 3), (SecondOrderQuadratic, "autograd", 2)],
    ids=["plain-finite-difference", "second-order-autograd"],
)
def test_default_hvp_steps_like_the_written_out_method(
    optimizer: str, module_class: type[PlainQuadratic], method: str, calls: int
) -> None:
    """With the default hvp, a plain module trains by finite differences (3 closure calls per
    step) and a module that keeps the graph by autograd (2 calls); both take the steps of the
    method written out with the known Hessian A."""
    module = module_class(optimizer)
    trainer = fit(module)
    used = trainer.optimizers[0]
    assert used.hvp == "auto"
    assert used.hvp_method() == method
    assert module.calls_per_step == [1] + [calls] * (STEPS - 1)
    torch.testing.assert_close(module.w.detach(), written_out(optimizer), atol=1e-9, rtol=0)


def test_clipping_is_active_in_the_written_out_method() -> None:
    """The clipped reference differs from the unclipped one, so the check above sees clipping."""
    assert (written_out("ClipNSGDHess") - written_out("NSGDHess")).norm() > 1e-3


class LoggingQuadratic(PlainQuadratic):
    """The plain module logging its training loss as an epoch mean, unaware of NSGDHess."""

    def training_step(self, batch: list[Tensor], batch_idx: int) -> Tensor:
        loss = super().training_step(batch, batch_idx)
        self.log("train/loss", loss, on_step=False, on_epoch=True)
        return loss


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_logged_loss_is_the_loss_at_the_current_weights(optimizer: str) -> None:
    """Under OptimizerAdapter (the CLI's default), the closure calls away from x_t log nothing:
    the epoch-mean train loss is the mean of f(x_0..x_3) of the written-out method."""
    module = LoggingQuadratic(optimizer)
    trainer = L.Trainer(
        max_epochs=1,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[OptimizerAdapter()],
    )
    trainer.fit(module, DataLoader(TensorDataset(torch.zeros(STEPS, 1)), batch_size=1))
    assert module.calls_per_step == [1] + [3] * (STEPS - 1)
    losses = [0.5 * (x - B) @ A @ (x - B) for x in iterates(optimizer)[:STEPS]]
    expected = torch.stack(losses).mean()
    logged = trainer.callback_metrics["train/loss"]
    torch.testing.assert_close(logged.double(), expected, atol=1e-6, rtol=0)
