"""The worker process of `mtlkd_kd_throughput`: timed training steps of one project tree's code.

    python benchmarks/mtlkd_kd_step.py REPEATS KIND BATCH [KIND BATCH ...]   # one JSON line

Run with a project tree (the working tree, or a commit exported by `git archive`) first on
PYTHONPATH, so that the steps run that tree's code. It imports nothing of the project but through
`project_module`, so it runs any commit's code, one with or without the benchmark harness.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("student KD", "teacher REINFORCE")
NUM_CUSTOMERS = 50


def model_args(config: str) -> dict:
    """The model's init_args of `configs/mtlkd/<config>` (the working tree's, for both codes)."""
    return yaml.safe_load((ROOT / "configs" / "mtlkd" / config).read_text())["model"]["init_args"]


def timed(owner: object, name: str, label: str, split: dict[str, float]) -> None:
    """Replace `owner.name` by a wrapper that adds its wall time to split[label]."""
    function: Callable = getattr(owner, name)

    def wrapper(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            split[label] += time.perf_counter() - start

    setattr(owner, name, wrapper)


def project_module(name: str) -> ModuleType:
    """The module `name` (e.g. "problems.vrp.env") of the project tree first on the path:
    `optiforge.<name>` in trees with the namespace package, the bare name in older commits."""
    tree = Path(os.environ.get("PYTHONPATH") or ROOT)
    namespaced = (tree / "optiforge" / "__init__.py").is_file()
    return importlib.import_module(f"optiforge.{name}" if namespaced else name)


def time_parts(split: dict[str, float]) -> None:
    """Wrap the parts of both kinds of step so that each call adds its time to `split`."""
    student_module = project_module("lightning_modules.mtlkd.student_module")
    HeavyDecoderPolicy = project_module("lightning_modules.mtlkd.student_policy").HeavyDecoderPolicy
    POMOPolicy = project_module("lightning_modules.mtlkd.teacher_policy").POMOPolicy
    env = project_module("problems.vrp.env")
    # The student decodes through `scores` (one call per batch) where it has one, else `step`.
    student_decoding = "scores" if hasattr(HeavyDecoderPolicy, "scores") else "step"
    for owner, name, label in (
        (POMOPolicy, "precompute", "teacher encoding"),
        (POMOPolicy, "step", "teacher decoding"),
        (HeavyDecoderPolicy, "precompute", "student encoding"),
        (HeavyDecoderPolicy, student_decoding, "student decoding"),
        (env, "action_mask", "masks"),
        (env, "step", "env steps"),
        (env, "reset", "env resets (prefix replays)"),
        (student_module, "distillation_kl", "KL loss"),
    ):
        timed(owner, name, label, split)


def build(kind: str, batch_size: int) -> tuple[object, object]:
    """(module, batch) of `kind`, seeded."""
    import torch

    student_module = project_module("lightning_modules.mtlkd.student_module")
    generate = project_module("problems.vrp.generator").generate
    SEEN_VARIANTS = project_module("problems.vrp.variants").SEEN_VARIANTS
    torch.manual_seed(0)
    if kind == "student KD":
        module = student_module.MTLKDStudent(**model_args("student.yaml"))
        batch = generate(list(SEEN_VARIANTS), NUM_CUSTOMERS, batch_size, seed=0)
    else:
        teacher_module = project_module("lightning_modules.mtlkd.teacher_module")
        module = teacher_module.POMOTeacher(**model_args("base.yaml"))
        batch = generate("CVRP", NUM_CUSTOMERS, batch_size, seed=0)
    module.log = lambda *args, **kwargs: None
    return module, batch


def measure(kind: str, batch_size: int, repeats: int, split: dict[str, float]) -> dict:
    """Warm-up step, then `repeats` timed steps of `kind`; `split` (cleared after the warm-up)
    collects the timed parts."""
    module, batch = build(kind, batch_size)
    seconds = []
    for repeat in range(repeats + 1):
        if repeat == 1:
            split.clear()
        start = time.perf_counter()
        loss = module.training_step(batch, 0)
        middle = time.perf_counter()
        loss.backward()
        module.zero_grad(set_to_none=True)
        end = time.perf_counter()
        split["backward"] += end - middle
        if repeat:
            seconds.append(end - start)
    return {
        "code": str(Path(project_module("lightning_modules").__file__).parents[1]),
        "step_s": seconds,
        "split_ms": {key: 1e3 * value / repeats for key, value in split.items()},
    }


def worker(batches: dict[str, int], repeats: int) -> dict[str, dict]:
    """Each kind's measurement (`batches`: kind -> batch size), one after the other, on one
    thread with the code on sys.path."""
    import torch

    torch.set_num_threads(1)
    split: dict[str, float] = defaultdict(float)
    time_parts(split)
    return {kind: measure(kind, size, repeats, split) for kind, size in batches.items()}


if __name__ == "__main__":
    pairs = sys.argv[2:]
    batches = {kind: int(size) for kind, size in zip(pairs[::2], pairs[1::2], strict=True)}
    print(json.dumps(worker(batches, int(sys.argv[1]))))
