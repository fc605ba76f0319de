"""DualAscent under torch.distributed (2 CPU processes, gloo): residuals averaged per step."""

from __future__ import annotations

from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel

from optiforge.optimizers import DualAscent, equality, inequality
from tests.two_ranks import WORLD_SIZE, run_on_two_ranks

STEPS = 6


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(16, 3, generator=generator, dtype=torch.float64)
    b = torch.randn(16, generator=generator, dtype=torch.float64)
    return a, b, torch.randn(3, generator=generator, dtype=torch.float64)


def fit(rank: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Least squares on all rows (rank None) or on this rank's half, with the batch-mean
    equality constraint mean(a @ x) = 0.5 and inequality x . c <= 0; returns (x, multipliers)."""
    a, b, c = data()
    if rank is not None:
        a, b = a[rank * 8 : (rank + 1) * 8], b[rank * 8 : (rank + 1) * 8]
    linear = torch.nn.Linear(3, 1, bias=False).double()
    torch.nn.init.zeros_(linear.weight)
    model = linear if rank is None else DistributedDataParallel(linear)
    primal = torch.optim.SGD(model.parameters(), lr=0.1)
    duals = DualAscent(dual_lr=0.3)
    for _ in range(STEPS):
        prediction = model(a).squeeze(-1)
        loss = 0.5 * (prediction - b).square().mean()
        constraints = {
            "mean": equality(prediction.mean() - 0.5),
            "cone": inequality(linear.weight.squeeze(0) @ c + 0.1),
        }
        lagrangian = duals.lagrangian(loss, constraints)
        primal.zero_grad()
        lagrangian.backward()
        primal.step()
        duals.step()
    multipliers = torch.cat([duals.multipliers["cone"], duals.multipliers["mean"]])
    return linear.weight.detach().reshape(-1), multipliers


def worker(rank: int, out_dir: str) -> None:
    # rank-dependent residuals: both ranks step with their mean
    duals = DualAscent(dual_lr=1.0)
    value = torch.tensor([float(rank + 1), -3.0 * rank], requires_grad=True)
    duals.lagrangian(value.sum() * 0, {"h": equality(value)})
    duals.step()
    weights, multipliers = fit(rank)
    torch.save(
        {"mean_step": duals.multipliers["h"], "weights": weights, "multipliers": multipliers},
        Path(out_dir) / f"rank{rank}.pt",
    )


def test_two_ranks_average_residuals_and_match_one_process(tmp_path: Path) -> None:
    """Two ranks average residuals, agree on multipliers, and match a one-process fit."""
    run_on_two_ranks(worker, str(tmp_path))
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD_SIZE)]
    for result in ranks:
        torch.testing.assert_close(result["mean_step"], torch.tensor([1.5, -1.5]))
    torch.testing.assert_close(ranks[0]["multipliers"], ranks[1]["multipliers"], rtol=0, atol=0)
    weights, multipliers = fit(None)
    torch.testing.assert_close(ranks[0]["weights"], weights)
    torch.testing.assert_close(ranks[0]["multipliers"], multipliers)
    assert float(multipliers.abs().min()) > 0, "both constraints must be active to mean much"
