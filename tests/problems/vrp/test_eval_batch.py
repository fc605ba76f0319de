"""The VRP evaluation batch: instances with their references, sliced and moved together."""

from __future__ import annotations

import torch

from optiforge.problems.vrp.eval_batch import VRPEvalBatch
from optiforge.problems.vrp.generator import generate


def test_index_keeps_rows_aligned_and_the_name() -> None:
    """Rows 1..2 of a 4-instance set keep their own references and scales and the set's name."""
    instances = generate("VRPTW", 5, 4, seed=0)
    batch = VRPEvalBatch(
        instances, torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 1.0, 2.0, 2.0]), "s"
    )
    part = batch.index(slice(1, 3))
    assert part.name == "s" and part.instances.batch_size == 2
    assert part.reference_cost.tolist() == [2.0, 3.0] and part.scale.tolist() == [1.0, 2.0]
    assert torch.equal(part.instances.locs, instances.locs[1:3])
    moved = part.to("cpu")
    assert moved.name == "s" and torch.equal(moved.reference_cost, part.reference_cost)
