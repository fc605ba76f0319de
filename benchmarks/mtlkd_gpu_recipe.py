"""MTL-KD at n = 100 in one short session on a lent GPU: the six seen-variant POMO teachers, the
heavy-decoder student distilled from them, and their evaluation, all written to the run folder.

    python -m optiforge.benchmarks run mtlkd_gpu_recipe --out $OUT \
        [--mvmoe-data Routing-MVMoE/data]

Every stage is a `train.py` command run in this process (the commands are recorded in the
result): `fit` of each teacher (configs/mtlkd/base.yaml + teacher_<variant>.yaml at n = 100,
`--teacher-seconds` each), its export to `teacher_<variant>_n100.pt`, `fit` of the student
(student_gpu_n100.yaml, distilled from those six files, `--student-seconds`), its export to
`student_n100.pt`, then `test` of the student (greedy) on every variant and of each teacher
(x8 augmentation) on its own: on MVMoE's n = 100 files where `--mvmoe-data` has them (the first
`--test-instances` of each file), else on generated instances against PyVRP. The defaults fit
in about 9 minutes of an H100 (timings not measured here: no GPU was lent when it was written);
the smoke preset runs the same stages on the CPU at n = 10 for a few steps each.
Writes mtlkd_gpu_recipe.{json,md} and the seven weights files.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.benchmarks.harness.record import scrub_path
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS


@dataclass(frozen=True)
class Config:
    """Sizes and time budgets of the stages."""

    accelerator: str = "gpu"
    num_customers: int = 100
    teacher_seconds: int = 35  # per teacher
    student_seconds: int = 210
    max_steps: int | None = None  # per fit (None: the time budget alone)
    teacher_batch: int = 64
    student_batch: int = 120
    val_instances: int = 32
    test_instances: int = 100
    reference_iterations: int = 200  # PyVRP, for the generated val/test sets
    reference_workers: int = 16
    mvmoe_data: str | None = None  # MVMoE's data folder (test files at n = num_customers)
    variants: tuple[str, ...] | None = None  # evaluated (None: all 16, those with MVMoE files)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.variants or ()) - set(ALL_VARIANTS))
        if unknown:
            raise ValueError(
                f"--variants: unknown {unknown}; the variants are {list(ALL_VARIANTS)}"
            )


def mvmoe_variants(folder: str | None, size: int) -> list[str]:
    """The variants of which `folder` holds MVMoE's test file at `size` customers."""
    if folder is None:
        return []
    files = {
        name: Path(folder) / name / f"{name.lower()}{size}_uniform.pkl" for name in ALL_VARIANTS
    }
    return [name for name, path in files.items() if path.is_file()]


def shared_arguments(args: Config, out: Path, batch: int) -> list[str]:
    """Data, trainer and logging settings every stage shares."""
    return [
        *("--data.init_args.num_customers", str(args.num_customers)),
        *("--data.init_args.batch_size", str(batch)),
        *("--data.init_args.batches_per_epoch", "20"),
        *("--data.init_args.val_instances", str(args.val_instances)),
        *("--data.init_args.test_instances", str(args.test_instances)),
        *("--data.init_args.eval_batch_size", str(args.val_instances)),
        *("--data.init_args.reference_iterations", str(args.reference_iterations)),
        *("--data.init_args.reference_workers", str(args.reference_workers)),
        *("--data.init_args.cache_dir", str(out / "vrp_cache")),
        *("--trainer.accelerator", args.accelerator, "--trainer.devices", "1"),
        *("--trainer.logger", "false", "--trainer.enable_progress_bar", "false"),
        *("--trainer.callbacks", "[]"),
    ]


def budget(seconds: int, max_steps: int | None) -> list[str]:
    """A fit's limits: wall time, and steps when capped."""
    hours, rest = divmod(seconds, 3600)
    limit = f"00:{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return ["--trainer.max_time", limit, "--trainer.max_epochs", "100000",
            "--trainer.max_steps", str(max_steps or -1), "--test_after_fit", "false"]  # fmt: skip


def train_py(stage: list[str], commands: list[str]) -> Any:
    """`python train.py STAGE...` in this process, seeded (recorded in `commands`); the CLI."""
    from optiforge.cli import main

    stage = [*stage, "--seed_everything", "0"]
    commands.append("python train.py " + " ".join(stage))
    return main(stage)


def fit_and_export(fit: list[str], folder: Path, weights: Path, commands: list[str]) -> None:
    """Fit into `folder`, write the weights file of its last checkpoint, drop the folder."""
    from optiforge.lightning_modules.mtlkd.policy_weights import export_checkpoint

    train_py([*fit, "--checkpoint.dirpath", str(folder)], commands)
    export_checkpoint(folder / "last.ckpt", weights, scrub_path(commands[-1]))
    shutil.rmtree(folder)


def logged_test_gaps(cli: Any, variants: list[str], size: int, on_files: bool) -> dict[str, float]:
    """Per variant, the test gap % the CLI's test run logged (NaN: no valid reference)."""
    metrics, prefix = cli.trainer.callback_metrics, "test/MVMoE/" if on_files else "test/"
    return {name: float(metrics[f"{prefix}{name}/n{size}/gap"]) for name in variants}


def main(run: Run, args: Config) -> None:
    out, n, commands = run.out_dir, args.num_customers, []
    wanted, on_files = list(args.variants or ALL_VARIANTS), mvmoe_variants(args.mvmoe_data, n)
    evaluated = [name for name in wanted if name in on_files] if on_files else wanted
    test_data = ["--data.init_args.eval_variants", "[" + ",".join(evaluated) + "]"]
    if on_files:
        test_data += ["--data.init_args.mvmoe_dir", str(args.mvmoe_data)]
    seconds: dict[str, float] = {}
    teachers: dict[str, str] = {}
    for name in SEEN_VARIANTS:
        start, folder = time.perf_counter(), out / f"teacher_{name.lower()}"
        configs = ["--config", "mtlkd/base.yaml",
                   "--config", f"mtlkd/teacher_{name.lower()}.yaml"]  # fmt: skip
        shared = shared_arguments(args, out, args.teacher_batch)
        fit = ["fit", *configs, *shared, *budget(args.teacher_seconds, args.max_steps)]
        teachers[name] = str(out / f"teacher_{name.lower()}_n{n}.pt")
        fit_and_export(fit, folder, Path(teachers[name]), commands)
        seconds[f"teacher {name}"] = time.perf_counter() - start
    start = time.perf_counter()
    files = "{" + ", ".join(f"{name}: {path}" for name, path in teachers.items()) + "}"
    student = ["--config", "mtlkd/base.yaml",
               "--config", "mtlkd/student_gpu_n100.yaml",
               "--model.init_args.teachers", files,
               *shared_arguments(args, out, args.student_batch)]  # fmt: skip
    fit = ["fit", *student, *test_data[:2], *budget(args.student_seconds, args.max_steps)]
    student_file = str(out / f"student_n{n}.pt")
    fit_and_export(fit, out / "student", Path(student_file), commands)
    seconds["student"] = time.perf_counter() - start
    start = time.perf_counter()
    tested = ["test", *student, "--model.init_args.weights", student_file, *test_data]
    greedy = logged_test_gaps(train_py(tested, commands), evaluated, n, bool(on_files))
    rows = [{"variant": name, "student greedy": greedy[name]} for name in evaluated]
    for name, path in teachers.items():
        if name not in evaluated:
            continue
        configs = ["--config", "mtlkd/base.yaml",
                   "--config", f"mtlkd/teacher_{name.lower()}.yaml"]  # fmt: skip
        tested = ["test", *configs, *shared_arguments(args, out, args.teacher_batch),
                  "--model.init_args.weights", path, "--data.init_args.eval_variants", f"[{name}]",
                  *test_data[2:]]  # fmt: skip
        gap = logged_test_gaps(train_py(tested, commands), [name], n, bool(on_files))[name]
        rows[evaluated.index(name)]["teacher x8"] = gap
    seconds["evaluation"] = time.perf_counter() - start
    source = "generated instances (PyVRP)"
    if on_files:
        source = f"MVMoE's files ({scrub_path(str(args.mvmoe_data))})"
    columns = [Column("variant", "variant"), Column("student greedy", "student greedy", ".2f")]
    columns.append(
        Column("teacher x8", lambda row: f"{row['teacher x8']:.2f}" if "teacher x8" in row else "")
    )
    text = (
        f"# MTL-KD GPU recipe at n = {n} ({args.accelerator})\n\nTest gap %, first "
        f"{args.test_instances} instances of {source}.\n\n{markdown_table(rows, columns)}\n\n"
        + "Stage seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()) + "\n"
    )  # fmt: skip
    payload = {"rows": rows, "seconds": seconds, "commands": commands, "test_source": source}
    run.write("mtlkd_gpu_recipe", payload, text)


BENCHMARK = Benchmark(
    "mtlkd_gpu_recipe",
    main,
    Config,
    smoke=dict(
        accelerator="cpu",
        num_customers=10,
        max_steps=2,
        teacher_batch=4,
        student_batch=6,
        val_instances=2,
        test_instances=2,
        reference_iterations=10,
        reference_workers=1,
        variants=("CVRP", "VRPTW", "OVRPB"),
    ),
)

if __name__ == "__main__":
    BENCHMARK.main()
