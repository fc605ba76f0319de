"""MeZO / TelescopingZO on 2 gloo ranks: each rank its own directions and batch, the scalars
all-gathered, and both ranks apply the same update, equal to an independent simulation."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from optiforge.optimizers import MeZO, TelescopingZO
from optiforge.optimizers.zo_perturbation import derive_seed
from tests.two_ranks import WORLD_SIZE as WORLD
from tests.two_ranks import run_on_two_ranks

STEPS, LR, EPS, SEED = 3, 0.05, 1e-2, 5
torch.manual_seed(0)
DATA_X = torch.randn(WORLD, 8, 3, dtype=torch.float64)
DATA_Y = torch.randn(WORLD, 8, dtype=torch.float64)


def loss(w: torch.Tensor, rank: int) -> torch.Tensor:
    """Rank `rank`'s least-squares loss (a quadratic: the central difference is exact)."""
    return (DATA_X[rank] @ w - DATA_Y[rank]).square().mean()


def build(kind: str, w: torch.nn.Parameter) -> torch.optim.Optimizer:
    if kind == "mezo":
        return MeZO([w], lr=LR, eps=EPS, seed=SEED)
    return TelescopingZO([w], lr=LR, construction="P4", mu=EPS, seed=SEED)


def worker(rank: int, kind: str, out: str) -> None:
    w = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
    optimizer = build(kind, w)
    for _ in range(STEPS):
        optimizer.step(lambda: loss(w, rank))
    gathered = [torch.zeros(3, dtype=torch.float64) for _ in range(WORLD)]
    dist.all_gather(gathered, w.detach())
    if rank == 0:
        torch.save(torch.stack(gathered), out)


def simulate(kind: str) -> torch.Tensor:
    """w <- w - lr mean_r (v_r^T grad f_r(w)) v_r, v_r drawn from (seed, step, rank)."""
    w = torch.zeros(3, dtype=torch.float64)
    for step in range(STEPS):
        update = torch.zeros(3, dtype=torch.float64)
        for rank in range(WORLD):
            generator = torch.Generator().manual_seed(derive_seed(SEED, step, rank, 0, 0))
            v = torch.randn(3, generator=generator, dtype=torch.float64)
            if kind == "telescoping":
                v = v * (3**0.5 / v.norm())
            leaf = w.clone().requires_grad_()
            (grad,) = torch.autograd.grad(loss(leaf, rank), leaf)
            update += (v @ grad) * v / WORLD
        w = w - LR * update
    return w


@pytest.mark.parametrize("kind", ["mezo", "telescoping"])
def test_two_ranks_agree_with_the_simulation(kind: str, tmp_path) -> None:
    """Both ranks end on the same weights, those of the one-process simulation."""
    out = str(tmp_path / "weights.pt")
    run_on_two_ranks(worker, kind, out)
    weights = torch.load(out)
    assert torch.equal(weights[0], weights[1])
    torch.testing.assert_close(weights[0], simulate(kind), rtol=1e-9, atol=1e-10)
