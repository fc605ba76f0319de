"""A tiny regression, a closure that honours every `LoopNeeds` clause, plain torch runs of any
registered optimizer on it (what the contract tests compare Lightning and DDP runs against), and
the DDP worker (here, so that the spawned ranks import no Lightning)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel

from optiforge.optimizers import LoopHooks, available, create, loop_needs, needs, wants_graph
from optiforge.optimizers.sharpness_pass import sharpness_pass
from tests.two_ranks import WORLD_SIZE

BATCH = 64  # MSAM's default m = 32 divides it; NSAM's default B = 32 leaves 32 ascent rows
FEATURES = 5


def batch(
    step: int, rows: int = BATCH, dtype: torch.dtype = torch.float64
) -> tuple[Tensor, Tensor]:
    """The (x [rows, 5], y [rows]) batch of step `step` (seeded by the step)."""
    generator = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(rows, FEATURES, generator=generator, dtype=dtype)
    y = torch.sin(x.sum(1)) + 0.1 * torch.randn(rows, generator=generator, dtype=dtype)
    return x, y


def network(dtype: torch.dtype = torch.float64) -> nn.Sequential:
    """A seeded 5-8-1 tanh network (57 parameters)."""
    torch.manual_seed(2)
    net = nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, 1))
    return net.to(dtype)


def per_sample_losses(net: nn.Module, x: Tensor, y: Tensor) -> Tensor:
    """Squared errors [rows]."""
    return (net(x).squeeze(-1) - y) ** 2


def make_closure(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    data: tuple[Tensor, Tensor],
    clip: float | None = None,
    autocast: bool = False,
    graph: bool = True,
) -> Callable[[], Tensor]:
    """The closure a careful torch loop writes for `optimizer`: sharpness-pass rows and
    reduction, no backward when forward-only, the graph when `wants_graph` (and `graph`), the
    gradient norm clipped to `clip` after every backward, the forward under bf16 autocast."""
    forward_only = loop_needs(optimizer).forward_only

    def closure() -> Tensor:
        sharp = sharpness_pass(optimizer)
        x, y = sharp.select(data)
        context = torch.autocast("cpu", torch.bfloat16) if autocast else contextlib.nullcontext()
        if forward_only:
            with context:
                return sharp.reduce(per_sample_losses(net, x, y))
        optimizer.zero_grad()
        with torch.enable_grad(), context:
            loss = sharp.reduce(per_sample_losses(net, x, y))
        loss.backward(create_graph=graph and wants_graph(optimizer))
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        return loss.detach()

    return closure


def flat(net: nn.Module) -> Tensor:
    """All parameters as one detached vector."""
    return torch.cat([p.detach().flatten() for p in net.parameters()])


def plain_run(
    name: str,
    steps: int,
    dtype: torch.dtype = torch.float64,
    rows: int = BATCH,
    accumulate: int = 1,
    **closure_options: object,
) -> Tensor:
    """`steps` steps of optimizer `name` (registry defaults) in a plain torch loop; step k sees
    batches k*accumulate .. (k+1)*accumulate-1 concatenated. The final flat parameters."""
    net = network(dtype)
    optimizer = create(name, net.parameters())
    for step in range(steps):
        parts = [batch(step * accumulate + i, rows, dtype) for i in range(accumulate)]
        data = (torch.cat([x for x, _ in parts]), torch.cat([y for _, y in parts]))
        optimizer.step(make_closure(net, optimizer, data, **closure_options))
    return flat(net)


DDP_NAMES = [name for name in available() if needs(name).ddp != "unsupported"]
DDP_STEPS = 3


def ddp_worker(rank: int, out: str) -> None:
    """Every DDP-capable optimizer, one after the other, DDP_STEPS steps on this rank's half of
    a 2 x BATCH batch (the DDP model's no_sync bound, as the adapter does)."""
    finals = {}
    for name in DDP_NAMES:
        model = DistributedDataParallel(network())
        optimizer = create(name, model.parameters())
        if loop_needs(optimizer).extra_passes:
            optimizer.bind_loop(LoopHooks(no_sync=model.no_sync))
        for step in range(DDP_STEPS):
            x, y = batch(step, WORLD_SIZE * BATCH)
            rows = slice(rank * BATCH, (rank + 1) * BATCH)
            optimizer.step(make_closure(model, optimizer, (x[rows], y[rows])))
        local = flat(model.module)
        gathered = [torch.zeros_like(local) for _ in range(WORLD_SIZE)]
        dist.all_gather(gathered, local)
        finals[name] = torch.stack(gathered)
    if rank == 0:
        torch.save(finals, out)
