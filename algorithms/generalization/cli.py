"""Command line of the generalization diagnostic.

    python -m optiforge.algorithms.generalization \
        --config configs/generalization/digits_1nn.yaml --retrainings 20 \
        --distributions data.init_args.label_noise=0.0,0.1,0.2,0.3

Each retraining is `python train.py fit` on a bootstrap resample of the training split (a CSV
log per run, no W&B). The result is printed as a few lines and, with --json, written as JSON.
Bad input (unknown config file, a config whose runs log no test metric, fewer than 3
retrainings, delta outside (0, 1)) ends with one line on stderr naming the option, exit
status 2, before any run starts. While it runs, stderr gets one line as each retraining starts
and one as it finishes (its losses, time so far). Ctrl-C stops the running `train.py`
children (SIGINT, then SIGKILL after 2 s), writes no result, and exits with status 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from optiforge.algorithms.generalization.diagnostic import Diagnosis, diagnose
from optiforge.algorithms.generalization.retraining import Distributions, Progress, Retraining


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


def distributions_option(text: str) -> Distributions:
    """`--distributions` parsed, its error message kept (argparse hides a ValueError's)."""
    try:
        return Distributions.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="python -m optiforge.algorithms.generalization",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        type=Path,
        action="append",
        required=True,
        help="train.py config file; repeat to layer files, as train.py does",
    )
    parser.add_argument("--retrainings", type=int, required=True, help="K, >= 3")
    parser.add_argument("--workers", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument(
        "--delta",
        type=float,
        default=0.1,
        help="failure probability of the bound, in (0, 1) (default 0.1)",
    )
    parser.add_argument("--seed", type=int, default=0, help="retraining k uses seed + k")
    parser.add_argument(
        "--distributions",
        type=distributions_option,
        default=None,
        help="collection of distributions, OPTION=V1,V2,... cycled over runs",
    )
    parser.add_argument(
        "--metric", default="acc", help="logged as train/<metric> and test/<metric> (default acc)"
    )
    parser.add_argument(
        "--metric-kind",
        choices=("accuracy", "loss"),
        default="accuracy",
        help="accuracy: the loss is 1 - metric (the 0-1 loss); loss: as logged",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        default=None,
        help="keep each run's logs here (default: a temporary folder)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    return parser


class PrintedProgress(Progress):
    """One stderr line per retraining start and finish."""

    def __init__(self, total: int) -> None:
        self.total, self.start = total, time.perf_counter()

    def started(self, index: int, seed: int, pid: int) -> None:
        print(f"retraining {index + 1}/{self.total} started (seed {seed}, pid {pid})",
              file=sys.stderr, flush=True)  # fmt: skip

    def finished(self, run: Retraining, done: int, total: int) -> None:
        print(
            f"retraining {run.index + 1}/{total} done in {run.seconds:.1f} s: train loss "
            f"{run.train_loss:.4f}, test loss {run.test_loss:.4f} ({done}/{total} done, "
            f"{time.perf_counter() - self.start:.0f} s so far)",
            file=sys.stderr,
            flush=True,
        )


def write_atomically(path: Path, text: str) -> None:
    """`text` to `path` through a temporary file and a rename: never half written."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def summary(diagnosis: Diagnosis) -> str:
    """The result as a few aligned lines."""
    e = diagnosis.estimate
    lines = [
        f"retrainings K = {e.retrainings}, wall time {diagnosis.wall_seconds:.1f} s "
        f"({diagnosis.workers} worker(s))",
        f"train loss {e.train_loss:.4f}, test loss {e.test_loss:.4f}",
        f"measured generalization gap (test - train) {e.gap:.4f} (sd {e.gap_std:.4f})",
        f"conditional variance of the loss given the training loss {e.conditional_variance:.3g}"
        f" (unconditional {e.variance:.3g})",
        f"bound: |test loss - ({e.intercept:.4f} + {e.slope:.4f} x train loss)| <= "
        f"{e.bound:.4f} with probability >= {1 - e.delta:g} "
        f"(ignoring the run: {e.uninformed_bound:.4f})",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse, diagnose, print; user errors become one line and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        diagnosis = diagnose(
            args.config,
            args.retrainings,
            workers=args.workers,
            delta=args.delta,
            seed=args.seed,
            distributions=args.distributions,
            metric=args.metric,
            kind=args.metric_kind,
            runs_dir=args.runs_dir,
            progress=PrintedProgress(args.retrainings),
        )
    except (ValueError, RuntimeError) as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        # The children are stopped and reaped and the scratch folder removed; leave without
        # the interpreter's exit work (seconds with torch loaded on a busy machine).
        sys.stderr.write("interrupted: running retrainings stopped, no result written\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    print(summary(diagnosis))
    if args.json is not None:
        write_atomically(args.json, json.dumps(diagnosis.to_json(), indent=1) + "\n")
        sys.stdout.write(f"wrote {args.json}\n")
