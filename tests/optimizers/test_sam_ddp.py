"""SAM, m-SAM and RW-SAM under 2-process DDP (gloo, CPU): ranks agree, and the update is the one
the method defines (global or per-rank ascent), computed independently in one process."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from optiforge.optimizers.contract import LoopHooks
from optiforge.optimizers.msam import MSAM
from optiforge.optimizers.rwsam import RWSAM, rademacher
from optiforge.optimizers.sam import SAM
from optiforge.optimizers.sharpness_pass import sharpness_pass
from tests.two_ranks import WORLD_SIZE as WORLD
from tests.two_ranks import run_on_two_ranks

STEPS, LR, RHO = 3, 0.1, 0.2
TEMPERATURE, DELTA, SEED = 2.0, 0.05, 4
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
    if kind.startswith("rwsam"):
        local = kind == "rwsam_local"
        return RWSAM(params, sgd, RHO, TEMPERATURE, DELTA, SEED, local_ascent=local)
    return MSAM(params, sgd, rho=RHO, micro_batch_size=4, local_ascent=True)


def train(model: torch.nn.Module, optimizer, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """STEPS steps on (x, y) with a closure following the sharpness-pass contract; the final
    flattened parameters."""

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


def train_locally(rank: int, kind: str) -> torch.Tensor:
    """STEPS steps of `kind` on this rank's data under DDP; the final flattened parameters."""
    model = DistributedDataParallel(initial_model())
    optimizer = build(kind, model.parameters())
    optimizer.bind_loop(LoopHooks(no_sync=model.no_sync))
    return train(model, optimizer, DATA_X[rank], DATA_Y[rank])


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


def per_sample_losses(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((x @ params[0].T + params[1]).squeeze(-1) - y) ** 2


def rwsam_reference(local: bool) -> torch.Tensor:
    """RW-SAM written out: probe at w + delta z (z from the seeded generator), Gibbs weights
    softmax(lambda |f_i(w + delta z) - f_i(w)| / delta) over the global batch (or per rank for a
    local ascent), ascent on sum_i p_i f_i, descent on the mean loss of all samples at w + e."""
    params = [p.detach().clone() for p in initial_model().parameters()]
    generator = torch.Generator().manual_seed(SEED)
    groups = [[0], [1]] if local else [[0, 1]]
    for _ in range(STEPS):
        z = rademacher(sum(p.numel() for p in params), generator, params[0].dtype)
        directions = [part.view_as(p) for part, p in zip(z.split([3, 1]), params, strict=True)]
        probe = [p + DELTA * d for p, d in zip(params, directions, strict=True)]
        descent = []
        for ranks in groups:
            x, y = DATA_X[ranks].reshape(-1, 3), DATA_Y[ranks].reshape(-1)
            leaves = [p.detach().requires_grad_() for p in params]
            losses = per_sample_losses(leaves, x, y)
            norms = (per_sample_losses(probe, x, y) - losses.detach()).abs() / DELTA
            weights = torch.softmax(TEMPERATURE * norms, dim=0)
            ascent = torch.autograd.grad((weights * losses).sum(), leaves)
            descent.append(loss_grad(perturbed(params, list(ascent)), x, y))
        params = [p - LR * g for p, g in zip(params, mean(descent), strict=True)]
    return torch.cat([p.flatten() for p in params])


def reference(kind: str) -> torch.Tensor:
    """The update written out in one process from the two ranks' data."""
    if kind.startswith("rwsam"):
        return rwsam_reference(local=kind == "rwsam_local")
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
@pytest.mark.parametrize("kind", ["sam", "sam_local", "msam_local", "rwsam", "rwsam_local"])
def test_ranks_agree_and_match_the_written_out_update(kind: str, tmp_path) -> None:
    """Both ranks end with the same weights, those of the update written out in one process."""
    out = str(tmp_path / "params.pt")
    run_on_two_ranks(worker, kind, out)
    gathered = torch.load(out)
    assert torch.equal(gathered[0], gathered[1])
    assert torch.allclose(gathered[0], reference(kind), atol=1e-6)


def test_local_and_global_ascent_differ() -> None:
    """The per-rank ascent is a different method, so the check above can tell them apart."""
    assert not torch.allclose(reference("sam"), reference("sam_local"), atol=1e-4)
    assert not torch.allclose(reference("rwsam"), reference("rwsam_local"), atol=1e-4)


def test_rwsam_reference_reweights() -> None:
    """The RW-SAM reference is not SAM: the Gibbs weights change the update the test checks."""
    assert not torch.allclose(reference("rwsam"), reference("sam"), atol=1e-4)


def test_one_process_rwsam_matches_its_reference() -> None:
    """The written-out RW-SAM is the optimizer's own update on the 16 rows in one process."""
    model = initial_model()
    optimizer = build("rwsam", model.parameters())
    flat = train(model, optimizer, DATA_X.reshape(-1, 3), DATA_Y.reshape(-1))
    assert torch.allclose(flat, reference("rwsam"), atol=1e-6)
