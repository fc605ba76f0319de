"""`python -m optiforge.benchmarks run NAME [--preset smoke|paper] [--publish] [--out DIR]
[options]`
and `python -m optiforge.benchmarks list`."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import shlex
import sys
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optiforge.benchmarks.harness import registry
from optiforge.benchmarks.harness.checks import config_errors
from optiforge.benchmarks.harness.record import provenance
from optiforge.benchmarks.harness.registry import FIGURES, RESULTS, RUNS, Benchmark, Run


@dataclass(frozen=True)
class Invocation:
    """A parsed command: which benchmark, its config, the preset and where results go."""

    benchmark: Benchmark
    config: Any
    preset: str
    publish: bool
    out: Path | None


def _option(parser: argparse.ArgumentParser, name: str, hint: object, default: object) -> None:
    """Add `--name` (also `--name-with-dashes`) for one typed config field."""
    flags = [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):  # X | None
        hint = next(arg for arg in args if arg is not type(None))
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    kwargs: dict[str, Any] = {"default": default, "help": "default: %(default)s"}
    if origin in (list, tuple):
        kwargs["nargs"] = "+"
        hint = args[0]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        kwargs["action"] = argparse.BooleanOptionalAction
    elif origin is typing.Literal:
        kwargs.update(choices=args, type=type(args[0]))
    else:
        kwargs["type"] = hint
    parser.add_argument(*flags, **kwargs)


def config_parser(benchmark: Benchmark, preset: str) -> argparse.ArgumentParser:
    """The options of `benchmark`'s config, defaulting to the preset's values."""
    parser = argparse.ArgumentParser(
        prog=f"python -m optiforge.benchmarks run {benchmark.name}",
        description=(sys.modules[benchmark.run.__module__].__doc__ or "").split("\n\n")[0],
    )
    values = {f.name: f.default for f in dataclasses.fields(benchmark.config)}
    values.update(benchmark.preset(preset))
    hints = typing.get_type_hints(benchmark.config)
    for item in dataclasses.fields(benchmark.config):
        if values[item.name] is dataclasses.MISSING:
            raise ValueError(f"{benchmark.name}: config field {item.name!r} needs a default")
        _option(parser, item.name, hints[item.name], values[item.name])
    return parser


def build_config(benchmark: Benchmark, preset: str, argv: Sequence[str]) -> Any:
    """`benchmark`'s config from the preset and the options in `argv`, before the value checks
    (SystemExit on an option that does not parse or that the config's own validation refuses)."""
    options = config_parser(benchmark, preset).parse_args(argv)
    fields = {f.name for f in dataclasses.fields(benchmark.config)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in vars(options).items()}
    try:
        return benchmark.config(**{k: v for k, v in values.items() if k in fields})
    except ValueError as error:  # the config's own validation, reported like a parse error
        config_parser(benchmark, preset).error(str(error))


HELP = {"-h", "--help"}


def show_help(top: argparse.ArgumentParser, argv: Sequence[str]) -> typing.NoReturn:
    """Print the help of the benchmark named in `argv` (its options, with the chosen preset's
    defaults) under the common options, or the common help when none is named; exit 0."""
    names = [word for word in argv if word in registry.NAMES]
    if not names:
        top.print_help()
        sys.exit(0)
    preset = top.parse_known_args(argv)[0].preset
    config_parser(registry.get(names[0]), preset).print_help()
    print(
        f"\ncommon options: --preset {{smoke,paper}} (the defaults above: {preset}), "
        "--publish (write benchmarks/results, docs/figures) | --out DIR"
    )
    sys.exit(0)


def parse(argv: Sequence[str], data_present: bool = True) -> Invocation:
    """Parse `run NAME ...` without running anything (SystemExit on bad arguments);
    `data_present=False` leaves the data the user brings unchecked (documentation checks)."""
    top = argparse.ArgumentParser(prog="python -m optiforge.benchmarks", add_help=True)
    top.add_argument("command", choices=["run"])
    top.add_argument("name", choices=registry.NAMES, metavar="NAME")
    top.add_argument("--preset", choices=["smoke", "paper"], default="paper")
    where = top.add_mutually_exclusive_group()
    where.add_argument(
        "--publish", action="store_true", help="write benchmarks/results, docs/figures"
    )
    where.add_argument(
        "--out", type=Path, help="results folder (default runs/benchmarks/NAME/TIME)"
    )
    if HELP & set(argv):
        show_help(top, [word for word in argv if word not in HELP])
    known, rest = top.parse_known_args(argv)
    if known.publish and known.preset == "smoke":
        top.error("a smoke run is never published")
    benchmark = registry.get(known.name)
    config = build_config(benchmark, known.preset, rest)
    errors = config_errors(config, benchmark.nonnegative)
    if not data_present:
        external = tuple(f"--{field.replace('_', '-')}:" for field in benchmark.external)
        errors = [error for error in errors if not error.startswith(external)]
    if errors:
        config_parser(benchmark, known.preset).error("; ".join(errors))
    return Invocation(benchmark, config, known.preset, known.publish, known.out)


def execute(invocation: Invocation, command: str) -> Run:
    """Run a parsed invocation into its folder and return the finished `Run`."""
    name, config = invocation.benchmark.name, invocation.config
    if invocation.publish:
        out_dir, figure_dir = RESULTS, FIGURES
    else:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        out_dir = invocation.out or RUNS / name / stamp
        figure_dir = out_dir
    run = Run(
        name=name,
        out_dir=out_dir,
        figure_dir=figure_dir,
        published=invocation.publish,
        provenance=provenance(
            command,
            preset=invocation.preset,
            seed=getattr(config, "seed", getattr(config, "seeds", None)),
            device=str(getattr(config, "device", "cpu")),
            peers=invocation.benchmark.peers,
        ),
    )
    invocation.benchmark.run(run, config)
    for path in run.written:
        Run.log(f"wrote {path}")
    return run


def main(argv: Sequence[str] | None = None) -> Run | None:
    """The `python -m optiforge.benchmarks` entry point."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["list"]:
        print("\n".join(sorted(registry.NAMES)))
        return None
    return execute(parse(argv), shlex.join(["python", "-m", "optiforge.benchmarks", *argv]))
