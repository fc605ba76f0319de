"""Command line of the replicable testers on data files with one sample per line.

    python -m optiforge.algorithms.replicable_testing uniformity --samples x.txt --n 100 \
        --eps 0.25 --rho 0.2 --seed 7
    python -m optiforge.algorithms.replicable_testing closeness --samples x.txt --other y.txt \
        --n 100 ...
    python -m optiforge.algorithms.replicable_testing independence --samples pairs.txt \
        --n1 10 --n2 20 ...
    python -m optiforge.algorithms.replicable_testing bound closeness --n 100 --eps 0.25 --rho 0.2

A sample is an integer label in [0, n) (independence: two labels "a b" or "a,b" per line); blank
lines are skipped. The decision goes to stdout as one line ("accept (...)" or "reject (...)");
bad input ends with one line on stderr naming the field, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import numpy as np
from numpy.typing import NDArray

from optiforge.algorithms.replicable_testing.sample_size import (
    closeness_samples,
    independence_samples,
    uniformity_samples,
)
from optiforge.algorithms.replicable_testing.testers import (
    closeness_test,
    independence_test,
    uniformity_test,
)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


def read_samples(field: str, path: Path, width: int) -> NDArray[np.int64]:
    """The labels of `path`, one sample of `width` integers per line; errors name `field`."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ValueError(f"{field}: cannot read {path} ({error.strerror})") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.replace(",", " ").split()
        try:
            values = [int(part) for part in parts]
        except ValueError:
            values = []
        if len(values) != width:
            kind = "an integer label" if width == 1 else f"{width} integer labels"
            raise ValueError(f"{field}: line {number} of {path}: {line.strip()!r} is not {kind}")
        rows.append(values)
    array = np.array(rows, dtype=np.int64).reshape(-1, width)
    return array[:, 0] if width == 1 else array


def parser() -> OneLineParser:
    """Subcommands uniformity, closeness, independence and bound."""
    main = OneLineParser(
        prog="python -m optiforge.algorithms.replicable_testing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = main.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in ("uniformity", "closeness", "independence"):
        command = commands.add_parser(name, help=f"replicable {name} test")
        command.add_argument("--samples", type=Path, required=True)
        if name == "closeness":
            command.add_argument("--other", type=Path, required=True)
        add_setting(command, name)
        command.add_argument("--seed", type=int, required=True, help="shared internal seed")
        command.add_argument("--threshold", type=float, help="fixed threshold (not replicable)")
    bound = commands.add_parser("bound", help="the samples a test needs")
    bound.add_argument("kind", choices=("uniformity", "closeness", "independence"))
    bound.add_argument("--n", type=int, help="support size (uniformity, closeness)")
    bound.add_argument("--n1", type=int, help="first support size (independence)")
    bound.add_argument("--n2", type=int, help="second support size (independence)")
    bound.add_argument("--eps", type=float, required=True)
    bound.add_argument("--rho", type=float, required=True)
    return main


def add_setting(command: argparse.ArgumentParser, name: str) -> None:
    """--n (or --n1 --n2), --eps and --rho."""
    if name == "independence":
        command.add_argument("--n1", type=int, required=True)
        command.add_argument("--n2", type=int, required=True)
    else:
        command.add_argument("--n", type=int, required=True)
    command.add_argument("--eps", type=float, required=True, help="TV distance in (0, 1]")
    command.add_argument("--rho", type=float, required=True, help="replicability in (0, 1)")


def run(args: argparse.Namespace) -> str:
    """The line to print for parsed `args`; bad values raise ValueError naming the field."""
    if args.command == "bound":
        if args.kind == "independence":
            if args.n1 is None or args.n2 is None:
                raise ValueError("n1, n2: independence needs --n1 and --n2")
            return str(independence_samples(args.n1, args.n2, args.eps, args.rho))
        if args.n is None:
            raise ValueError(f"n: {args.kind} needs --n")
        size = uniformity_samples if args.kind == "uniformity" else closeness_samples
        return str(size(args.n, args.eps, args.rho))
    common = {"eps": args.eps, "rho": args.rho, "seed": args.seed, "threshold": args.threshold}
    if args.command == "uniformity":
        return str(uniformity_test(read_samples("samples", args.samples, 1), args.n, **common))
    if args.command == "closeness":
        x = read_samples("samples", args.samples, 1)
        y = read_samples("other", args.other, 1)
        return str(closeness_test(x, y, args.n, **common))
    pairs = read_samples("samples", args.samples, 2)
    return str(independence_test(pairs, args.n1, args.n2, **common))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse, test, print one line; a ValueError becomes one line on stderr and exit status 2."""
    args = parser().parse_args(argv)
    try:
        print(run(args))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
