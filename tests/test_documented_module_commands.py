"""Every `python -m optiforge.lightning_modules...` command (weights export, model cards) in
README.md, docs/ and the model cards names a module with a command line, and its arguments
parse there (nothing is run)."""

from __future__ import annotations

import importlib
import re
import shlex

import pytest

from tests.cli_helpers import PROJECT_ROOT

INLINE_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
COMMAND = re.compile(r"python -m (optiforge\.lightning_modules(?:\.\w+)+)((?:\\\n|[^\n`|;&#])*)")
PAGES = [
    PROJECT_ROOT / "README.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    *sorted((PROJECT_ROOT / "lightning_modules").glob("*/weights/MODEL_CARD.md")),
]


def documented() -> list[tuple[str, str, list[str]]]:
    """(where, module, arguments) of each documented command; an inline code span may wrap
    over lines, so its line breaks read as continuations."""
    found = []
    for path in PAGES:
        text = INLINE_CODE.sub(lambda m: m.group(0).replace("\n", " \\\n"), path.read_text())
        for match in COMMAND.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            arguments = shlex.split(match.group(2).replace("\\\n", " "))
            found.append((f"{path.name}:{line}", match.group(1), arguments))
    return found


COMMANDS = documented()


def test_the_scan_finds_the_weights_commands() -> None:
    """The export and card commands are among those found (a broken pattern would pass all)."""
    modules = {module for _, module, _ in COMMANDS}
    assert {
        "optiforge.lightning_modules.mtlkd.policy_weights",
        "optiforge.lightning_modules.model_card",
    } <= modules


@pytest.mark.parametrize(("where", "module", "arguments"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_documented_module_command_parses(where: str, module: str, arguments: list[str]) -> None:
    """The module has a `build_parser` and the documented arguments (templates such as
    `<ckpt>` as written) parse with it."""
    parser = getattr(importlib.import_module(module), "build_parser", None)
    assert parser is not None, f"{where}: {module} has no command line (build_parser)"
    parser().parse_args(arguments)
