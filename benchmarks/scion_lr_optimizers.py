"""The optimizers of the Scion learning-rate sweep (`scion_lr_sweep`): how each is built at one lr
and rho, its grid of powers of two, and the clipping quantity D that calibrates rho."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.optim import Optimizer

from optiforge.benchmarks.scion_lr_tasks import Task
from optiforge.optimizers import (
    ClippedScion,
    Scion,
    UnconstrainedClippedScion,
    UnconstrainedScion,
    make_lmo,
)


@dataclass(frozen=True)
class OptimizerSpec:
    """An optimizer of the sweep: grid centre 2^centre, and how to build it at one lr."""

    name: str
    centre: int
    build: Callable[[nn.Module, Task, float, float], Optimizer]  # (net, task, lr, rho)
    clipped_quantity: str | None = None  # "dual_norm" / "fw_gap" for the clipped variants
    unclipped: str | None = None  # the method whose run calibrates rho


def optimizer_specs() -> list[OptimizerSpec]:
    def adamw(net: nn.Module, task: Task, lr: float, rho: float) -> Optimizer:
        return torch.optim.AdamW(net.parameters(), lr=lr)

    def scion(cls: type[Optimizer], clipped: bool) -> Callable[..., Optimizer]:
        def build(net: nn.Module, task: Task, lr: float, rho: float) -> Optimizer:
            extra = {"rho": rho} if clipped else {}
            return cls(task.param_groups(net), lr=lr, momentum=0.1, **extra)

        return build

    return [
        OptimizerSpec("AdamW", -7, adamw),
        OptimizerSpec("UnconstrainedScion", -7, scion(UnconstrainedScion, False)),
        OptimizerSpec(
            "UnconstrainedClippedScion",
            -7,
            scion(UnconstrainedClippedScion, True),
            "dual_norm",
            "UnconstrainedScion",
        ),
        OptimizerSpec("Scion", -5, scion(Scion, False)),
        OptimizerSpec("ClippedScion", -5, scion(ClippedScion, True), "fw_gap", "Scion"),
    ]


def grid(centre: int, points: int) -> list[float]:
    """`points` consecutive powers of two around 2^centre (one more below for an even count)."""
    low = centre - points // 2
    return [2.0 ** (low + i) for i in range(points)]


@torch.no_grad()
def clipping_quantity(optimizer: Optimizer, kind: str) -> float:
    """D of Alg. 3 / Alg. 4 that the next `step` would use, from the current gradients:
    d = (1 - m) d_prev + m g, u = scale * lmo(d); D = sum <d, -u> ("dual_norm") or
    sum <d, x - u> ("fw_gap") over all tensors with a gradient."""
    total = 0.0
    for group in optimizer.param_groups:
        lmo = make_lmo(group["norm"], **group["norm_kwargs"])
        for x in group["params"]:
            if x.grad is None:
                continue
            previous = optimizer.state[x].get("momentum_buffer", torch.zeros_like(x))
            d = torch.lerp(previous, x.grad, group["momentum"])
            u = group["scale"] * lmo(d)
            v = x - u if kind == "fw_gap" else -u
            total += float(torch.sum(d * v))
    return total
