"""ClippedScion under torch.distributed (2 CPU processes, gloo): DDP and ZeRO-sharded params."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel

from optiforge.optimizers import ClippedScion, scion_param_groups
from tests.two_ranks import WORLD_SIZE, run_on_two_ranks

STEPS = 4
PER_RANK = 8
# rho above every D of the run (measured 0.43-0.99): eta = D / rho < 1 at each step.
HYPER = {"lr": 0.2, "momentum": 0.5, "rho": 4.0}


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3))


def batch(step: int, rank: int | None) -> tuple[Tensor, Tensor]:
    """Step `step`'s global batch [WORLD_SIZE * PER_RANK, ...], or rank `rank`'s slice of it."""
    generator = torch.Generator().manual_seed(100 + step)
    x = torch.randn(WORLD_SIZE * PER_RANK, 4, generator=generator)
    y = torch.randn(WORLD_SIZE * PER_RANK, 3, generator=generator)
    if rank is None:
        return x, y
    rows = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
    return x[rows], y[rows]


def train(model: nn.Module, optimizer: torch.optim.Optimizer, rank: int | None) -> None:
    for step in range(STEPS):
        x, y = batch(step, rank)

        def closure(x: Tensor = x, y: Tensor = y) -> Tensor:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        optimizer.step(closure)


def flat(model: nn.Module) -> Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def gather(vector: Tensor) -> Tensor:
    """[WORLD_SIZE, n]: every rank's copy of `vector`."""
    copies = [torch.empty_like(vector) for _ in range(WORLD_SIZE)]
    dist.all_gather(copies, vector)
    return torch.stack(copies)


def worker(rank: int, out_dir: str) -> None:
    """Run DDP + ClippedScion and ZeRO + ClippedScion (sharded and not) on this rank's data."""
    results = {}
    model = make_model()
    optimizer = ClippedScion(scion_param_groups(model), **HYPER)
    train(DistributedDataParallel(model), optimizer, rank)
    results["ddp"] = gather(flat(model))
    for sharded in (True, False):
        model = make_model()
        optimizer = ZeroRedundancyOptimizer(
            model.parameters(), ClippedScion, sharded_params=sharded, **HYPER
        )
        assert len(optimizer.optim.param_groups[0]["params"]) < len(list(model.parameters()))
        train(DistributedDataParallel(model), optimizer, rank)
        results[f"zero_sharded_{sharded}"] = gather(flat(model))
    if rank == 0:
        torch.save(results, Path(out_dir) / "results.pt")


def single_process(grouped: bool) -> Tensor:
    """The same run on one process with the concatenated batches."""
    model = make_model()
    params = scion_param_groups(model) if grouped else model.parameters()
    train(model, ClippedScion(params, **HYPER), rank=None)
    return flat(model)


def test_clipped_scion_ddp_matches_single_process(tmp_path: Path) -> None:
    """Both ranks end with identical parameters equal (1e-6) to one process on the full batch;
    under ZeRO, D must be all-reduced (sharded_params=True), else the run drifts away."""
    run_on_two_ranks(worker, str(tmp_path))
    results = torch.load(tmp_path / "results.pt")

    ddp = results["ddp"]
    assert torch.equal(ddp[0], ddp[1])
    torch.testing.assert_close(ddp[0], single_process(grouped=True), rtol=0, atol=1e-6)

    sharded = results["zero_sharded_True"]
    assert torch.equal(sharded[0], sharded[1])
    reference = single_process(grouped=False)
    torch.testing.assert_close(sharded[0], reference, rtol=0, atol=1e-6)
    assert (results["zero_sharded_False"][0] - reference).abs().max() > 1e-4
