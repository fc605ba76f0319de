"""What a command line means before the parser sees it: the default config and packaged configs.

- Any `fit` / `validate` / `test` / `predict` call without a `--config` starts from
  `configs/default.yaml` (so `train.py fit --optimizer optiforge.optimizers.SAM ...` trains the
  default experiment with SAM instead of stopping at a missing `model`); no arguments at all
  means `fit` with it.
- A `--config` path that is not a file where the command runs is looked up in the configs that
  ship with optiforge (`config_dir()`), with or without its leading `configs/`: from any folder,
  and after a non-editable `pip install`, `--config mtlkd/base.yaml` names the packaged file.
- A `--config` that names no file at all is a user mistake: `MissingConfig` names the file and
  where it was looked for (the CLI prints it as one line, before anything is written).
"""

from __future__ import annotations

from pathlib import Path

SUBCOMMANDS = ("fit", "validate", "test", "predict")
PACKAGE_DIR = Path(__file__).resolve().parent


class MissingConfig(ValueError):
    """A `--config` that names no file, here or among the packaged configs."""


def config_dir() -> Path:
    """The packaged configs: `configs/` beside the packages in a source tree, the copy inside
    the package (package data) in an installed one."""
    for candidate in (PACKAGE_DIR / "configs", PACKAGE_DIR.parent / "configs"):
        if (candidate / "default.yaml").is_file():
            return candidate
    raise FileNotFoundError(f"no configs/default.yaml beside or inside {PACKAGE_DIR}")


def default_config() -> Path:
    """`configs/default.yaml`: the quick, real run of a bare `train.py`."""
    return config_dir() / "default.yaml"


def resolve_config(value: str) -> str:
    """`value` itself when it is a file (or not a path: a YAML string); else the packaged config
    of that name; else `MissingConfig`."""
    path = Path(value)
    if path.is_file() or "\n" in value or not value.endswith((".yaml", ".yml")):
        return value
    relative = Path(*path.parts[1:]) if path.parts[:1] == ("configs",) else path
    packaged = config_dir() / relative
    if not path.is_absolute() and packaged.is_file():
        return str(packaged)
    raise MissingConfig(
        f"config: no file {value} (looked in {Path.cwd()} and in the packaged configs "
        f"{config_dir()})"
    )


def prepare(args: list[str]) -> list[str]:
    """`args` with every `--config` resolved (`resolve_config`) and the default config inserted
    after the subcommand when none is given."""
    if not args:
        return ["fit", "--config", str(default_config())]
    prepared: list[str] = []
    has_config = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--config" and index + 1 < len(args):
            prepared += [arg, resolve_config(args[index + 1])]
            has_config = True
            index += 2
            continue
        if arg.startswith("--config="):
            prepared.append("--config=" + resolve_config(arg.partition("=")[2]))
            has_config = True
        else:
            prepared.append(arg)
        index += 1
    if not has_config and prepared[0] in SUBCOMMANDS:
        prepared[1:1] = ["--config", str(default_config())]
    return prepared
