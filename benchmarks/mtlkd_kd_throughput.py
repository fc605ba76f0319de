"""MTL-KD training throughput: the student's KD step and the POMO teacher's REINFORCE step.

    python -m optiforge.benchmarks.mtlkd_kd_throughput [--baseline COMMIT] [--after COMMIT]
        [--rounds 3]
        [--repeats 4] [--student-batch 60] [--teacher-batch 16]

Measures instances per second of one optimisation step (`training_step` + backward, as
Lightning runs it, without the optimizer update) on one torch thread, warm-up step excluded,
median over `rounds` x `repeats` steps:
- "student KD": `MTLKDStudent` with `configs/mtlkd/student.yaml`'s model (the shipped n = 50
  teachers), a batch of `--student-batch` instances mixing the 6 seen variants at n = 50;
- "teacher REINFORCE": `POMOTeacher` with `configs/mtlkd/base.yaml`'s model (n = 50 starts),
  `--teacher-batch` CVRP instances at n = 50.
"after" is the working tree's code, or with `--after COMMIT` that commit's; with `--baseline
COMMIT` the same measurement also runs on that commit's code ("before"). A commit's code is
exported by `git archive` to a temporary folder and put first on the path of a worker process;
the two codes run in alternating rounds so that load on a shared machine hits both alike, and
the table reports after / before ratios from that one run. Each worker also reports the
per-step time split (teacher encoding, teacher decoding, student decoding, masks, env steps,
env resets with their prefix replays, KL, backward) by wrapping those functions; parts that
call each other overlap (a reset's prefix replay runs masks and env steps).
Writes benchmarks/results/mtlkd_kd_throughput.{json,md}.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import yaml

from optiforge.benchmarks.harness.checks import check_arguments

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
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
    tree = Path(os.environ.get("PYTHONPATH") or ROOT)  # run_worker's `code`
    namespaced = (tree / "optiforge" / "__init__.py").is_file()
    return importlib.import_module(f"optiforge.{name}" if namespaced else name)


def build(kind: str, batch_size: int, split: dict[str, float]) -> tuple[object, object]:
    """(module, batch) of `kind`, seeded, with the parts of its step timed into `split`."""
    import torch

    student_module = project_module("lightning_modules.mtlkd.student_module")
    HeavyDecoderPolicy = project_module("lightning_modules.mtlkd.student_policy").HeavyDecoderPolicy
    POMOPolicy = project_module("lightning_modules.mtlkd.teacher_policy").POMOPolicy
    env = project_module("problems.vrp.env")
    generate = project_module("problems.vrp.generator").generate
    SEEN_VARIANTS = project_module("problems.vrp.variants").SEEN_VARIANTS

    for owner, name, label in (
        (POMOPolicy, "precompute", "teacher encoding"),
        (POMOPolicy, "step", "teacher decoding"),
        (HeavyDecoderPolicy, "precompute", "student encoding"),
        (HeavyDecoderPolicy, "step", "student decoding"),
        (env, "action_mask", "masks"),
        (env, "step", "env steps"),
        (env, "reset", "env resets (prefix replays)"),
        (student_module, "distillation_kl", "KL loss"),
    ):
        timed(owner, name, label, split)
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


def worker(kind: str, batch_size: int, repeats: int) -> dict:
    """Warm-up step, then `repeats` timed steps of `kind` with the code on sys.path."""
    import torch

    torch.set_num_threads(1)
    split: dict[str, float] = defaultdict(float)
    module, batch = build(kind, batch_size, split)
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


def run_worker(code: Path | None, kind: str, batch_size: int, repeats: int) -> dict:
    """`worker` in a fresh process, with `code` (a project tree) first on its path."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind]
    command += ["--batch", str(batch_size), "--repeats", str(repeats)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    env.pop("PYTHONPATH", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    done = subprocess.run(
        command, cwd=code or ROOT, env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def export(commit: str, folder: Path) -> Path:
    """`commit`'s files in `folder` (git archive), for a worker to import."""
    folder.mkdir()
    archive = subprocess.run(
        ["git", "archive", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def summary(runs: list[dict], batch_size: int) -> dict:
    """Median step time and throughput over every timed step of `runs`, and the mean split."""
    steps = [s for run in runs for s in run["step_s"]]
    split: dict[str, float] = defaultdict(float)
    for run in runs:
        for key, value in run["split_ms"].items():
            split[key] += value / len(runs)
    median = statistics.median(steps)
    return {
        "code": runs[0]["code"],
        "steps": len(steps),
        "median_step_s": median,
        "instances_per_s": batch_size / median,
        "split_ms": dict(split),
    }


def markdown(payload: dict) -> str:
    """The results table and each step's time split as Markdown."""
    codes = [code for code in ("after", "before") if code in payload["kinds"][KINDS[0]]]
    lines = [
        f"MTL-KD training throughput, 1 thread, n = {NUM_CUSTOMERS}; after = "
        f"{payload['after_commit']}, before = {payload.get('before_commit')}",
        "",
        "| step | batch | " + " | ".join(f"{code} inst/s" for code in codes) + " | ratio |",
        "|---|---|" + "---|" * len(codes) + "---|",
    ]
    for kind, result in payload["kinds"].items():
        rates = " | ".join(f"{result[code]['instances_per_s']:.2f}" for code in codes)
        lines.append(f"| {kind} | {result['batch']} | {rates} | {result.get('ratio', '-')} |")
    for kind, result in payload["kinds"].items():
        lines += ["", f"{kind} step, mean ms per step:", ""]
        lines += ["| part | " + " | ".join(codes) + " |", "|---|" + "---|" * len(codes)]
        splits = [result[code]["split_ms"] for code in codes]
        for part in sorted(set().union(*splits), key=lambda key: -splits[0].get(key, 0.0)):
            values = " | ".join(f"{split.get(part, 0.0):.1f}" for split in splits)
            lines.append(f"| {part} | {values} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="commit whose code is measured as 'before'")
    parser.add_argument("--after", help="commit measured as 'after' (default: working tree)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=4, help="timed steps per round")
    parser.add_argument("--student-batch", type=int, default=60)
    parser.add_argument("--teacher-batch", type=int, default=16)
    parser.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = check_arguments(parser, parser.parse_args())
    if args.worker:
        print(json.dumps(worker(args.worker, args.batch, args.repeats)))
        return
    batches = {KINDS[0]: args.student_batch, KINDS[1]: args.teacher_batch}
    after = git("rev-parse", "--short", args.after or "HEAD")
    payload: dict = {"after_commit": after if args.after else f"{after} + working tree"}
    payload["kinds"] = {}
    with tempfile.TemporaryDirectory() as folder:
        codes: dict[str, Path | None] = {"after": None}
        for code, commit in (("after", args.after), ("before", args.baseline)):
            if commit:
                payload[f"{code}_commit"] = git("rev-parse", "--short", commit)
                codes[code] = export(commit, Path(folder) / code)
        for kind, batch_size in batches.items():
            runs: dict[str, list[dict]] = {code: [] for code in codes}
            for _ in range(args.rounds):
                for code, path in codes.items():
                    runs[code].append(run_worker(path, kind, batch_size, args.repeats))
            result = {code: summary(found, batch_size) for code, found in runs.items()}
            result["batch"] = batch_size
            if "before" in result:
                after, before = result["after"], result["before"]
                result["ratio"] = round(after["instances_per_s"] / before["instances_per_s"], 3)
            payload["kinds"][kind] = result
            print(kind, json.dumps({k: v for k, v in result.items() if k != "split_ms"}))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mtlkd_kd_throughput.json").write_text(json.dumps(payload, indent=1))
    (RESULTS / "mtlkd_kd_throughput.md").write_text(markdown(payload))
    print(markdown(payload))


if __name__ == "__main__":
    main()
