"""Every `python train.py ...` command in README.md and docs/*.md runs, at smoke scale.

Commands are read from code blocks (backslash continuations joined) and inline code spans (which
may wrap across lines). Each runs in this process with its own arguments followed by the caps of
a smoke run (`--trainer.fast_dev_run 1`: one batch of each loop, no logger, no checkpoint) and
the per-system size overrides of tests/test_configs.py. A command that is only an experiment's
config files is the experiment tests/test_configs.py already runs that way, so it is checked to
be one of those instead of being run twice. Templates (`<ckpt>`, `...`) are not commands; the
commands that need files the project does not ship are listed, with the reason, in `EXTERNAL`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.cli_helpers import PROJECT_ROOT, run_cli, run_train_py
from tests.test_configs import (
    EXPERIMENTS,
    FAST_DEV_OVERRIDES,
    FILE_OVERRIDES,
    WEIGHT_OVERRIDES,
)

DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
COMMAND = re.compile(r"python train\.py(?:\s+[^\s`|;&]+)*")
CAPS = ["--trainer.fast_dev_run", "1"]
# On top of tests/test_configs.py's sizes: fewer evaluation sets and instances, so that the
# commands that test shipped weights (16 variants, x8 augmentation) take seconds, not minutes.
SMALLER = {
    "mtlkd": ["--data.init_args.eval_variants", "[CVRP]"],
    "fsnet": [
        *("--data.init_args.train_size", "8", "--data.init_args.val_size", "2"),
        *("--data.init_args.test_size", "2", "--data.init_args.batch_size", "4"),
    ],
}
# Options whose value a smoke run replaces anyway: two commands that differ only there are one.
CAPPED = {"--trainer.max_time", "--trainer.max_epochs"}
# Commands that read files a clone does not have, with what they need.
EXTERNAL = {"Routing-MVMoE/data": "MVMoE's published test files (downloaded by the user)"}


def code_texts(markdown: str) -> list[str]:
    """The code of a page: each code block's lines (continuations joined) and each inline span
    (newlines inside it become spaces)."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", markdown, flags=re.S)
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    lines = [line for block in blocks for line in re.sub(r"\\\n\s*", " ", block).splitlines()]
    spans = [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", prose)]
    return lines + spans


def documented_commands() -> dict[str, list[str]]:
    """Each distinct documented command (its arguments after `python train.py`) -> the pages
    that show it."""
    found: dict[str, list[str]] = {}
    for page in DOCS:
        for text in code_texts(page.read_text(encoding="utf-8")):
            for match in COMMAND.finditer(text):
                command = " ".join(match.group(0).split()[2:])
                found.setdefault(command, []).append(page.name)
    return found


def is_template(command: str) -> bool:
    """A usage pattern with placeholders, not a command."""
    return "<" in command or "..." in command


def normalized(args: list[str]) -> list[str]:
    """`args` without the options a smoke run caps, and with `fit` for a bare call."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in CAPPED:
            skip = True
        else:
            kept.append(arg)
    return kept or ["fit"]


def config_files(args: list[str]) -> list[Path]:
    """The `--config` files of `args`, as paths under the project."""
    pairs = zip(args, args[1:], strict=False)
    return [PROJECT_ROOT / value for flag, value in pairs if flag == "--config"]


def only_configs(args: list[str]) -> bool:
    """Whether `args` is `fit` followed by `--config` files and nothing else."""
    return args[0] == "fit" and len(args) == 1 + 2 * len(config_files(args))


def smoke_overrides(args: list[str]) -> list[str]:
    """The size and weights overrides tests/test_configs.py gives the configs `args` names."""
    extra: list[str] = []
    for path in config_files(args):
        relative = path.relative_to(PROJECT_ROOT / "configs")
        if path.name == "base.yaml":
            extra += FAST_DEV_OVERRIDES.get(relative.parts[0], [])
            extra += SMALLER.get(relative.parts[0], [])
        extra += FILE_OVERRIDES.get(str(relative), [])
        extra += next((v for k, v in WEIGHT_OVERRIDES.items() if path.stem.startswith(k)), [])
    return extra


def covered_by_config_tests(args: list[str]) -> bool:
    """Whether `args` is exactly an experiment tests/test_configs.py smoke-runs."""
    experiments = {tuple(files) for files in EXPERIMENTS}
    return only_configs(args) and tuple(config_files(args)) in experiments


COMMANDS = documented_commands()
RUNNABLE = sorted(
    {
        " ".join(normalized(shlex.split(command)))
        for command in COMMANDS
        if not is_template(command)
        and not any(path in command for path in EXTERNAL)
        and not covered_by_config_tests(normalized(shlex.split(command)))
    }
)


def test_commands_are_found_on_the_pages() -> None:
    """The extraction sees the README's and the docs' commands, wrapped spans included."""
    assert len(COMMANDS) > 40
    assert "" in COMMANDS  # the bare `python train.py`
    assert any(
        c.startswith("fit --optimizer optiforge.optimizers.BayesCurvature") for c in COMMANDS
    )
    wrapped = "test --config configs/hephaestus/base.yaml --config configs/hephaestus/refine"
    assert any(c.startswith(wrapped) for c in COMMANDS)


def test_every_command_is_run_or_accounted_for() -> None:
    """Each documented command is run here, or is an experiment tests/test_configs.py runs, a
    template, or needs an external file listed in EXTERNAL; some of each kind exist."""
    kinds = {"run": 0, "config test": 0, "template": 0, "external": 0}
    for command in COMMANDS:
        args = normalized(shlex.split(command))
        if is_template(command):
            kinds["template"] += 1
        elif any(path in command for path in EXTERNAL):
            kinds["external"] += 1
        elif covered_by_config_tests(args):
            kinds["config test"] += 1
        else:
            assert " ".join(args) in RUNNABLE, command
            kinds["run"] += 1
    assert min(kinds.values()) > 0, kinds


@pytest.mark.slow
@pytest.mark.parametrize("command", RUNNABLE)
def test_documented_command_runs(command: str, in_tmp_dir: Path) -> None:
    """The command, capped to one batch per loop, runs to the end without an error. A DDP
    command runs its ranks as processes forked from the warm server (as torchrun starts them),
    never inside this test process."""
    args = shlex.split(command)
    args = [str(PROJECT_ROOT / a) if a.startswith("configs/") else a for a in args]
    if "ddp" in args:
        ranks = int(args[args.index("--trainer.devices") + 1])
        done = run_train_py(*args, *smoke_overrides(args), *CAPS, cwd=in_tmp_dir, ranks=ranks)
        assert done.returncode == 0, done.stderr[-3000:]
        return
    try:
        run_cli(*args, *smoke_overrides(args), *CAPS)
    except SystemExit as stop:  # --print_config prints, then exits
        assert stop.code in (0, None), command
