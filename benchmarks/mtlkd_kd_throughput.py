"""MTL-KD training throughput: the student's KD step and the POMO teacher's REINFORCE step.

    python -m optiforge.benchmarks run mtlkd_kd_throughput [--baseline COMMIT] [--after COMMIT]
        [--rounds 3] [--repeats 4] [--student-batch 60] [--teacher-batch 16]

Measures instances per second of one optimisation step (`training_step` + backward, as
Lightning runs it, without the optimizer update) on one torch thread, warm-up step excluded,
median over `rounds` x `repeats` steps:
- "student KD": `MTLKDStudent` with `configs/mtlkd/student.yaml`'s model (the shipped n = 50
  teachers), a batch of `--student-batch` instances mixing the 6 seen variants at n = 50;
- "teacher REINFORCE": `POMOTeacher` with `configs/mtlkd/base.yaml`'s model (n = 50 starts),
  `--teacher-batch` CVRP instances at n = 50.
"after" is the working tree's code, or with `--after COMMIT` that commit's; with `--baseline
COMMIT` the same measurement also runs on that commit's code ("before"). A commit's code is
exported by `git archive` to a temporary folder and put first on the path of a worker process
(`benchmarks/mtlkd_kd_step.py`); the two codes run in alternating rounds (one worker
process per round and code, measuring both kinds of step) so that load on a shared machine hits
both alike, and the table reports after / before ratios from that one run.
Each worker also reports the per-step time split (teacher encoding, teacher decoding, student
decoding, masks, env steps, env resets with their prefix replays, KL, backward) by wrapping those
functions; parts that call each other overlap (a reset's prefix replay runs masks and env steps).
Writes mtlkd_kd_throughput.{json,md}.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from optiforge.benchmarks import mtlkd_kd_step
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.mtlkd_kd_step import KINDS, NUM_CUSTOMERS


def git(*args: str) -> str:
    """What `git ARGS` prints in this clone."""
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


@dataclass(frozen=True)
class Config:
    """The codes compared (commits), the timed steps and the batch sizes."""

    baseline: str | None = None  # commit whose code is measured as "before"
    after: str | None = None  # commit measured as "after" (None: the working tree)
    rounds: int = 3
    repeats: int = 4  # timed steps per round
    student_batch: int = 60
    teacher_batch: int = 16

    def __post_init__(self) -> None:
        for option, commit in (("--baseline", self.baseline), ("--after", self.after)):
            verify = ["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"]
            if commit and subprocess.run(verify, cwd=ROOT, capture_output=True).returncode:
                raise ValueError(f"{option}: no commit {commit!r} in this clone")


def run_worker(code: Path | None, batches: dict[str, int], repeats: int) -> dict[str, dict]:
    """The worker in a fresh process measuring each kind of step (kind -> batch size), with
    `code` (a project tree; None: this one) first on its path (also where an editable install
    points elsewhere)."""
    sizes = [str(part) for kind, size in batches.items() for part in (kind, size)]
    command = [sys.executable, mtlkd_kd_step.__file__, str(repeats), *sizes]
    code = code or ROOT
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=code, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def main(out: Run, args: Config) -> None:
    """Both kinds of step, each code in alternating rounds of worker processes."""
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
        runs = {kind: {code: [] for code in codes} for kind in batches}
        for _ in range(args.rounds):
            for code, path in codes.items():
                for kind, measured in run_worker(path, batches, args.repeats).items():
                    runs[kind][code].append(measured)
        for kind, batch_size in batches.items():
            result = {code: summary(found, batch_size) for code, found in runs[kind].items()}
            result["batch"] = batch_size
            if "before" in result:
                after, before = result["after"], result["before"]
                result["ratio"] = round(after["instances_per_s"] / before["instances_per_s"], 3)
            payload["kinds"][kind] = result
            out.log(f"{kind} " + json.dumps({k: v for k, v in result.items() if k != "split_ms"}))
    out.write("mtlkd_kd_throughput", payload, markdown(payload))


BENCHMARK = Benchmark(
    "mtlkd_kd_throughput",
    main,
    Config,
    smoke=dict(rounds=1, repeats=1, student_batch=2, teacher_batch=2),
)

if __name__ == "__main__":
    BENCHMARK.main()
