"""SAM and m-SAM under 2-process DDP (gloo, CPU): ranks agree, and the update is the one the
method defines (global or per-rank ascent), computed independently in one process."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from optimizers import MSAM, SAM, sharpness_pass
from tests.two_ranks import WORLD_SIZE as WORLD
from tests.two_ranks import run_on_two_ranks

STEPS, LR, RHO = 3, 0.1, 0.2
torch.manual_seed(0)
DATA_X = torch.randn(WORLD, 8, 3)
DATA_Y = torch.randn(WORLD, 8)


def initial_model() -> torch.nn.Linear:
    torch.manual_seed(5)
    return torch.nn.Linear(3, 1)


def build(kind: str, params) -> torch.optim.Optimizer:
    sgd = functools.partial(torch.optim.SGD, lr=LR)
    if kind == "sam":
        return SAM(params, sgd, rho=RHO)
    if kind == "sam_local":
        return SAM(params, sgd, rho=RHO, local_ascent=True)
    return MSAM(params, sgd, rho=RHO, micro_batch_size=4, local_ascent=True)


def train_locally(rank: int, kind: str) -> torch.Tensor:
    """STEPS steps of `kind` on this rank's data under DDP; the final flattened parameters."""
    model = DistributedDataParallel(initial_model())
    optimizer = build(kind, model.parameters())
    optimizer.ascent_context = model.no_sync
    x, y = DATA_X[rank], DATA_Y[rank]

    def closure():
        optimizer.zero_grad()
        sharp = sharpness_pass(optimizer)
        xb, yb = sharp.select((x, y))
        loss = sharp.reduce((model(xb).squeeze(-1) - yb) ** 2)
        loss.backward()
        return loss

    for _ in range(STEPS):
        optimizer.step(closure)
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def worker(rank: int, kind: str, out: str) -> None:
    flat = train_locally(rank, kind)  # the DDP model (and its reducer) is gone after this
    gathered = [torch.zeros_like(flat) for _ in range(WORLD)]
    dist.all_gather(gathered, flat)
    if rank == 0:
        torch.save(torch.stack(gathered), out)


def loss_grad(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    leaves = [p.detach().requires_grad_() for p in params]
    loss = ((x @ leaves[0].T + leaves[1]).squeeze(-1) - y).pow(2).mean()
    return list(torch.autograd.grad(loss, leaves))


def perturbed(params: list[torch.Tensor], grads: list[torch.Tensor]) -> list[torch.Tensor]:
    norm = torch.sqrt(sum((g**2).sum() for g in grads))
    return [p + RHO * g / norm for p, g in zip(params, grads, strict=True)]


def mean(lists: list[list[torch.Tensor]]) -> list[torch.Tensor]:
    return [torch.stack(parts).mean(0) for parts in zip(*lists, strict=True)]


def reference(kind: str) -> torch.Tensor:
    """The update written out in one process from the two ranks' data."""
    params = [p.detach().clone() for p in initial_model().parameters()]
    chunks = [slice(0, 4), slice(4, 8)] if kind == "msam_local" else [slice(0, 8)]
    for _ in range(STEPS):
        per_chunk = []
        for rows in chunks:
            batches = [(DATA_X[r, rows], DATA_Y[r, rows]) for r in range(WORLD)]
            if kind == "sam":
                shared = perturbed(params, mean([loss_grad(params, *b) for b in batches]))
                points = [shared] * WORLD
            else:
                points = [perturbed(params, loss_grad(params, *b)) for b in batches]
            per_chunk.append(mean([loss_grad(w, *b) for w, b in zip(points, batches, strict=True)]))
        step = mean(per_chunk)
        params = [p - LR * g for p, g in zip(params, step, strict=True)]
    return torch.cat([p.flatten() for p in params])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sam", "sam_local", "msam_local"])
def test_ranks_agree_and_match_the_written_out_update(kind: str, tmp_path) -> None:
    out = str(tmp_path / "params.pt")
    run_on_two_ranks(worker, kind, out)
    gathered = torch.load(out)
    assert torch.equal(gathered[0], gathered[1])
    assert torch.allclose(gathered[0], reference(kind), atol=1e-6)


def test_local_and_global_ascent_differ() -> None:
    """The per-rank ascent is a different method, so the check above can tell them apart."""
    assert not torch.allclose(reference("sam"), reference("sam_local"), atol=1e-4)
