"""Two gloo processes, one node each, take exactly the steps of the one-process simulation."""

from __future__ import annotations

from pathlib import Path

import torch

from optiforge.algorithms.diverse.launch import distributed_run
from optiforge.algorithms.diverse.runner import simulate
from optiforge.algorithms.diverse.settings import RunSettings
from tests.algorithms.diverse.conftest import random_shards
from tests.two_ranks import run_on_two_ranks

RUNS = {
    "diverse": RunSettings(
        method="diverse", nodes=2, step_size=0.2, batch_size=4.0, snapshot_probability=0.2,
        mix_rounds=2, lambda_x=0.2, lambda_y=0.2, iterations=60, log_every=20, seed=3,
    ),
    "uniform_batches": RunSettings(
        method="diverse", nodes=2, step_size=0.2, batch_size=3.0, batch_distribution="uniform",
        lambda_x=0.2, lambda_y=0.2, iterations=40, log_every=20, seed=5,
    ),
    "gt_eg": RunSettings(method="gt_eg", nodes=2, step_size=0.2, iterations=30, log_every=10),
    "centralized_ogda": RunSettings(
        method="centralized_ogda", nodes=2, step_size=0.2, iterations=30, log_every=10
    ),
}  # fmt: skip


def worker(rank: int, directory: str) -> None:
    """This rank keeps only its own shard and runs every configuration of RUNS."""
    features, targets = random_shards(nodes=2, shard=25, dim=3, seed=7)
    out = {}
    for name, settings in RUNS.items():
        history, method = distributed_run(
            settings, features[rank : rank + 1], targets[rank : rank + 1]
        )
        out[name] = {"z": method.z, "history": history}
    torch.save(out, Path(directory) / f"rank{rank}.pt")


def test_two_gloo_ranks_equal_the_simulation(tmp_path: Path) -> None:
    """Every node's iterate after the run matches the simulation to 1e-8 (float64), and so
    do the recorded distances, oracle counts and communication rounds."""
    run_on_two_ranks(worker, str(tmp_path))
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    features, targets = random_shards(nodes=2, shard=25, dim=3, seed=7)
    for name, settings in RUNS.items():
        history, method = simulate(settings, features, targets)
        assert history[-1]["distance"] < 0.5 * history[0]["distance"], name
        for rank in range(2):
            torch.testing.assert_close(ranks[rank][name]["z"][0], method.z[rank], rtol=0, atol=1e-8)
        for ours, theirs in zip(ranks[0][name]["history"], history, strict=True):
            assert ours["communication"] == theirs["communication"]
            assert ours["evaluations_per_node"] == theirs["evaluations_per_node"]
            assert abs(ours["distance"] - theirs["distance"]) < 1e-8
