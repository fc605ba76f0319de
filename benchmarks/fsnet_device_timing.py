"""FSNet's batch solve on an accelerator: time per instance at large batches, from trained weights.

    python -m optiforge.benchmarks run fsnet_device_timing --checkpoints A.ckpt B.ckpt \\
        --device cuda --batch-sizes 1024 8192

Loads FSNet checkpoints written by `python train.py fit` (the network is trained elsewhere, on
CPU; not shipped), moves model and family to `--device`, draws fresh parameters from the family
(seeded) and times `solve` on the first B of them for each batch size (one untimed warm-up, then
the median of `--repeats`, the device synchronized around each solve). Every returned point is
checked by the family's residuals (feasible rate at the model's report tolerance, mean
objective), and the same checkpoint's solve of `--cpu-batch` instances on one CPU thread gives
the ratio within the run. No reference solve: the gaps are in the CPU benchmarks. Without
`--checkpoints` a 6-variable convex QP FSNet is trained for 2 steps first (a trial of the
pipeline, as the smoke preset runs it, not a measurement of a trained model).

Writes fsnet_device_timing.{json,md}.
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from optiforge.benchmarks.harness import Benchmark, Run, timeit
from optiforge.benchmarks.harness.timing import cuda_sync
from optiforge.lightning_modules.fsnet.module import FSNet
from optiforge.problems.constrained import ProblemSpec

PARAMETER_SEED = 7
TRIAL = "trial: convex QP, 6 variables, trained 2 steps in this run"


@dataclass(frozen=True)
class Config:
    """The checkpoints (empty: a trial one trained here), the device and the batch sizes."""

    checkpoints: tuple[Path, ...] = ()
    device: Literal["cpu", "cuda"] = "cuda"
    batch_sizes: tuple[int, ...] = (1024, 8192)
    cpu_batch: int = 1024
    repeats: int = 3
    test_max_iter: int = 200


def measured(model: FSNet, x: torch.Tensor, repeats: int) -> dict[str, float]:
    """Median seconds of `repeats` solves of batch `x` after a warm-up, per instance too, and
    the feasible rate and mean objective of the points by the family's own residuals."""
    solved: list[torch.Tensor] = []
    sync = cuda_sync(x.device.type)
    timing = timeit(lambda: solved.append(model.timed_solve(x)[0]), repeats=repeats, sync=sync)
    with torch.no_grad():
        feasible = model.family.violation(solved[-1], x).within(model.report_tolerance)
        objective = model.family.objective(solved[-1], x)
    return {
        "batch": len(x),
        "seconds": timing.median,
        "ms_per_instance": 1e3 * timing.median / len(x),
        "feasible_rate": float(feasible.double().mean()),
        "objective_mean": float(objective.mean()),
    }


def load(path: Path, test_max_iter: int) -> FSNet:
    """The checkpoint's FSNet on the CPU in eval mode; anything else ends in one line."""
    try:
        with torch.serialization.safe_globals([ProblemSpec]):  # the problem block in hparams
            model = FSNet.load_from_checkpoint(
                path, map_location="cpu", test_max_iter=test_max_iter
            )
    except Exception as error:  # noqa: BLE001 - a user's file: name it, no traceback
        raise SystemExit(
            f"--checkpoints: {path} is not an FSNet checkpoint ({type(error).__name__})"
        ) from None
    return model.eval()


def train_trial(folder: Path) -> Path:
    """A 6-variable convex-QP FSNet trained for 2 steps and saved as train.py would."""
    from optiforge.benchmarks.quiet_trainer import quiet_trainer
    from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule

    problem = ProblemSpec("convex_qp", num_vars=6, num_eq=2, num_ineq=2)
    data = ConstrainedProblemDataModule(
        problem, train_size=32, val_size=1, test_size=1, batch_size=16, cache_dir=str(folder)
    )
    trainer = quiet_trainer(1, folder)
    trainer.fit(FSNet(problem, (16,), max_iter=5, unrolled_iter=2), datamodule=data)
    trainer.save_checkpoint(folder / "convex_qp.ckpt")
    return folder / "convex_qp.ckpt"


def time_checkpoint(model: FSNet, args: Config) -> dict:
    """Per-instance times on the device at each batch size and on one CPU thread."""
    device_model = copy.deepcopy(model).to(args.device)
    device_model.family = device_model.family.to(args.device)
    count = max(*args.batch_sizes, args.cpu_batch)
    x_all = device_model.family.sample_parameters(count, PARAMETER_SEED)
    row: dict = {"problem": str(model.problem), "device": {}}
    for size in args.batch_sizes:
        row["device"][size] = measured(device_model, x_all[:size], args.repeats)
        Run.log(f"{model.problem} {args.device} {row['device'][size]}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    row["cpu"] = measured(model, x_all[: args.cpu_batch].cpu(), 1)
    torch.set_num_threads(threads)
    return row


def markdown(results: dict, args: Config, device_name: str) -> str:
    """One table per checkpoint: ms per instance on the device and on one CPU thread."""
    lines = [f"FSNet batch solve on {device_name}; test iterations {args.test_max_iter}.", ""]
    for name, row in results.items():
        lines += [f"### {name}: {row['problem']}", ""]
        lines += ["| where | batch | ms / instance | feasible | mean objective |", "|---" * 5 + "|"]
        timed = [("CPU, 1 thread", row["cpu"])]
        timed += [(args.device, result) for result in row["device"].values()]
        for where, result in timed:
            lines.append(
                f"| {where} | {result['batch']} | {result['ms_per_instance']:.4f} | "
                f"{result['feasible_rate']:.3f} | {result['objective_mean']:.4g} |"
            )
        lines.append("")
    return "\n".join(lines)


def run(run: Run, args: Config) -> None:
    """Load every checkpoint (a bad file or an absent device stops before any timing), time each."""
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: CUDA is not available here (allowed here: cpu)")
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    if args.checkpoints:
        models = {str(path): load(path, args.test_max_iter) for path in args.checkpoints}
    else:
        with tempfile.TemporaryDirectory() as scratch:
            models = {TRIAL: load(train_trial(Path(scratch)), args.test_max_iter)}
    results = {name: time_checkpoint(model, args) for name, model in models.items()}
    payload = {"device": device_name, "config": vars(args), "results": results}
    run.write("fsnet_device_timing", payload, markdown(results, args, device_name))


BENCHMARK = Benchmark(
    "fsnet_device_timing",
    run,
    Config,
    smoke=dict(device="cpu", batch_sizes=(4, 16), cpu_batch=4, repeats=1, test_max_iter=20),
    external=("checkpoints",),
)

if __name__ == "__main__":
    BENCHMARK.main()
