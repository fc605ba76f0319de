"""MTL-KD solvers as the evaluation benchmarks run them: a model's decodings as functions of a
batch, and one measured run (validated costs, feasibility, time and peak memory per instance)."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from optiforge.lightning_modules.mtlkd.policy_weights import build_module, export_checkpoint
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch

Solver = Callable[[VRPBatch], Tensor]


def load_model(path: Path, **settings: object) -> VRPEvaluationModule:
    """A model from a weights file, or from a Lightning checkpoint (exported on the way), built
    with `settings` as further constructor arguments."""
    if path.suffix != ".ckpt":
        return build_module(path, **settings)
    with tempfile.TemporaryDirectory() as scratch:
        exported = Path(scratch) / "exported.pt"
        export_checkpoint(path, exported)
        return build_module(exported, **settings)


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@contextmanager
def peak_rss_increase() -> Iterator[dict[str, float]]:
    """Yields a dict whose "mib" is, after the block, the peak RSS growth during it."""
    result = {"mib": 0.0}
    start, peak, done = rss_bytes(), [rss_bytes()], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield result
    finally:
        done.set()
        thread.join()
        result["mib"] = (max(peak[0], rss_bytes()) - start) / 2**20


def run(solver: Solver, instances: VRPBatch, chunk: int, name: str) -> dict[str, object]:
    """Solve `instances` in chunks; validated costs [B] (NaN if infeasible), feasibility,
    milliseconds per instance and the peak RSS growth while solving."""
    costs, seconds = [], 0.0
    with peak_rss_increase() as memory:
        for first in range(0, instances.batch_size, chunk):
            part = instances.index(slice(first, first + chunk))
            start = time.perf_counter()
            with torch.no_grad():
                solutions = solver(part)
            seconds += time.perf_counter() - start
            costs.append(validate_batch(part, solutions, "warn", name))
    cost = np.concatenate(costs)
    return {
        "cost": cost,
        "feasible": float(np.isfinite(cost).mean()),
        "ms_per_instance": 1e3 * seconds / instances.batch_size,
        "peak_rss_increase_mib": memory["mib"],
    }


def gap_summary(result: dict[str, object], reference: np.ndarray) -> dict[str, float]:
    """Mean gap (%) over feasible solutions, feasibility and time of one `run` result."""
    cost = result["cost"]
    gap = 100.0 * (cost - reference) / reference
    return {
        "gap": float(np.nanmean(gap)),
        "feasible": result["feasible"],
        "ms_per_instance": result["ms_per_instance"],
        "peak_rss_increase_mib": result["peak_rss_increase_mib"],
    }


def greedy(module: VRPEvaluationModule) -> Solver:
    """The module's own greedy decoding (the student's without R3C)."""
    if isinstance(module, MTLKDStudent):
        return lambda batch: module.solve(batch, "greedy", r3c_iterations=0)
    return lambda batch: module.solve(batch, "greedy")


def augment(module: VRPEvaluationModule) -> Solver:
    """The module's multi-start x 8 augmentation decoding."""
    return lambda batch: module.solve(batch, "augment")


def with_r3c(student: MTLKDStudent, budget: int) -> Solver:
    """The student's greedy decoding followed by `budget` R3C rounds (its segment and seed)."""
    return lambda batch: student.solve(batch, "greedy", r3c_iterations=budget)
