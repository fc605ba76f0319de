"""FSNet's batch solve on an accelerator: time per instance at large batches, from trained weights.

Loads FSNet checkpoints written by `python train.py fit` (the network is trained elsewhere, on
CPU), moves model and family to `--device`, draws fresh parameters from the family (seeded) and
times `solve` on the first B of them for each batch size (one untimed warm-up, then the median
of `--repeats`, the device synchronized around each solve). Every returned point is checked by
the family's residuals (feasible rate at the model's report tolerance, mean objective), and the
same checkpoint's solve of `--cpu-batch` instances on one CPU thread gives the ratio within the
run. No reference solve: the gaps are in the CPU benchmarks.

    python -m optiforge.benchmarks.fsnet_device_timing --checkpoints a.ckpt b.ckpt --device cuda \\
        --batch-sizes 1024 8192 --output-dir "$OUT"

writes fsnet_device_timing.{json,md} to --output-dir.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from optiforge.lightning_modules.fsnet.module import FSNet
from optiforge.problems.constrained import ProblemSpec

RESULTS = Path(__file__).resolve().parent / "results"
PARAMETER_SEED = 7


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels so a wall-clock reading covers them (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measured(model: FSNet, x: torch.Tensor, repeats: int) -> dict[str, float]:
    """Median seconds of `repeats` solves of batch `x` after a warm-up, per instance too, and
    the feasible rate and mean objective of the points by the family's own residuals."""
    model.timed_solve(x)
    seconds = []
    for _ in range(repeats):
        synchronize(x.device)
        start = time.perf_counter()
        y, _ = model.timed_solve(x)
        synchronize(x.device)
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    with torch.no_grad():
        feasible = model.family.violation(y, x).within(model.report_tolerance)
        objective = model.family.objective(y, x)
    return {
        "batch": len(x),
        "seconds": median,
        "ms_per_instance": 1e3 * median / len(x),
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
        sys.exit(f"--checkpoints: {path} is not an FSNet checkpoint ({type(error).__name__})")
    return model.eval()


def on_device(model: FSNet, device: torch.device) -> FSNet:
    """A copy of `model` with its weights and its family's data on `device`."""
    moved = copy.deepcopy(model).to(device)
    moved.family = moved.family.to(device)
    return moved


def time_checkpoint(model: FSNet, args: argparse.Namespace) -> dict:
    """Per-instance times on the device at each batch size and on one CPU thread."""
    device_model = on_device(model, torch.device(args.device))
    count = max(*args.batch_sizes, args.cpu_batch)
    x_all = device_model.family.sample_parameters(count, PARAMETER_SEED)
    row: dict = {"problem": str(model.problem), "device": {}}
    for size in args.batch_sizes:
        row["device"][size] = measured(device_model, x_all[:size], args.repeats)
        print(model.problem, args.device, json.dumps(row["device"][size]), flush=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    row["cpu"] = measured(model, x_all[: args.cpu_batch].cpu(), 1)
    torch.set_num_threads(threads)
    return row


def markdown(results: dict, args: argparse.Namespace, device_name: str) -> str:
    """One table per checkpoint: ms per instance on the device and on one CPU thread."""
    lines = [f"FSNet batch solve on {device_name}; test iterations {args.test_max_iter}.", ""]
    for name, row in results.items():
        lines += [
            f"### {name}: {row['problem']}",
            "",
            "| where | batch | ms / instance | feasible | mean objective |",
            "|---|---|---|---|---|",
        ]
        timed = [("CPU, 1 thread", row["cpu"])]
        timed += [(args.device, result) for result in row["device"].values()]
        for where, result in timed:
            lines.append(
                f"| {where} | {result['batch']} | {result['ms_per_instance']:.4f} | "
                f"{result['feasible_rate']:.3f} | {result['objective_mean']:.4g} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Time every checkpoint; a missing checkpoint or device ends in one line before any run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=Path, nargs="+", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1024, 8192])
    parser.add_argument("--cpu-batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--test-max-iter", type=int, default=200)
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.checkpoints if not path.is_file()]
    if missing:
        sys.exit(f"--checkpoints: no such file: {', '.join(missing)}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit(f"--device {args.device}: CUDA is not available here (allowed: cpu, or cuda)")
    if min(args.batch_sizes) < 1 or min(args.cpu_batch, args.repeats, args.test_max_iter) < 1:
        sys.exit(
            "--batch-sizes, --cpu-batch, --repeats and --test-max-iter must be positive integers"
        )
    device = torch.device(args.device)
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    models = {str(path): load(path, args.test_max_iter) for path in args.checkpoints}
    results = {name: time_checkpoint(model, args) for name, model in models.items()}
    text = markdown(results, args, device_name)
    print(text)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "fsnet_device_timing.md").write_text(text)
    record = {"device": device_name, "args": {k: str(v) for k, v in vars(args).items()}}
    record["results"] = results
    (args.output_dir / "fsnet_device_timing.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
