"""Run a method and record its progress: distance to the exact saddle point and duality gap
against oracle calls per node and communication rounds, in a simulation or on real ranks."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import Tensor

from optiforge.algorithms.diverse.communicator import DenseCommunicator
from optiforge.algorithms.diverse.method import NodeMethod
from optiforge.algorithms.diverse.saddle import SaddleReference, shard_moments
from optiforge.algorithms.diverse.settings import RunSettings
from optiforge.algorithms.diverse.topology import make_topology


def record(method: NodeMethod, reference: SaddleReference, saddle: Tensor, iteration: int) -> dict:
    """Progress of every node at `iteration` (gathers rows from all ranks; not counted)."""
    communicator = method.communicator
    rows = communicator.gather(method.z).to(torch.float64).cpu()
    counts = communicator.gather(method.evaluations[:, None].to(method.z)).to(torch.float64)
    average = rows.mean(dim=0)
    return {
        "iteration": iteration,
        "evaluations_per_node": float(counts.mean()),
        "rounds": communicator.rounds,
        "reductions": communicator.reductions,
        "communication": communicator.rounds + communicator.reductions,
        "distance": float((average - saddle).square().sum()),
        "node_distance": float((rows - saddle).square().sum(dim=1).mean()),
        "consensus": float((rows - average).square().sum(dim=1).mean()),
        "gap": float(reference.gap(average)),
    }


def run(
    method: NodeMethod,
    reference: SaddleReference,
    iterations: int,
    log_every: int,
    log: Callable[[dict], None] | None = None,
) -> list[dict]:
    """`iterations` steps of `method`; a record every `log_every` steps (and at 0 and the end),
    each with the seconds spent in steps so far."""
    saddle = reference.saddle().cpu()
    history, seconds = [], 0.0
    for iteration in range(iterations + 1):
        if iteration % log_every == 0 or iteration == iterations:
            history.append({**record(method, reference, saddle, iteration), "seconds": seconds})
            if log is not None:
                log(history[-1])
        if iteration < iterations:
            start = time.perf_counter()
            method.step()
            seconds += time.perf_counter() - start
    return history


def summary_line(history: list[dict], target: float) -> str:
    """The run's last line: final squared distance of the average to the saddle relative to the
    start, rounds, oracle calls per node, and whether and when `target` (relative) was
    reached at a recorded iteration."""
    start, last = history[0]["distance"], history[-1]
    relative = last["distance"] / start if start > 0 else 0.0
    reached = next((row for row in history if row["distance"] <= target * start), None)
    verdict = (
        f"target {target:.0e} reached at iteration {reached['iteration']} "
        f"({reached['communication']} rounds)"
        if reached is not None
        else f"target {target:.0e} NOT reached"
    )
    return (
        f"done: |zbar-z*|^2 = {relative:.2e} of the start after {last['iteration']} iterations, "
        f"{last['communication']} rounds, {last['evaluations_per_node']:.0f} oracle calls per "
        f"node; {verdict}"
    )


def reference_of(settings: RunSettings, features: Tensor, targets: Tensor) -> SaddleReference:
    """The exact reference of the rows in `features` [nodes, n, d] (all of them)."""
    return SaddleReference.from_sums(
        *(m.cpu() if isinstance(m, Tensor) else m for m in shard_moments(features, targets)),
        settings.lambda_x,
        settings.lambda_y,
    )


def simulate(
    settings: RunSettings, features: Tensor, targets: Tensor
) -> tuple[list[dict], NodeMethod]:
    """The run in one process: every node is a row, every gossip round one dense matmul."""
    topology = make_topology(
        settings.topology, settings.nodes, settings.edge_probability, settings.seed
    )
    communicator = DenseCommunicator(topology, features.device)
    method = settings.build(features, targets, communicator)
    reference = reference_of(settings, features, targets)
    return run(method, reference, settings.iterations, settings.log_every), method
