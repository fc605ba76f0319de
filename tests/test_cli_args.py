"""What a command line means before parsing (default config, packaged configs) and the one-line
messages for mistakes in option names, config files and bounds; nothing is written. The
subprocess form (`python train.py ...` as typed) is covered by tests/test_train_cli_fail_fast.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from optiforge.cli import lr_bound, nearest_option, wrapped_option_hint
from optiforge.cli_args import MissingConfig, config_dir, prepare, resolve_config
from tests.cli_helpers import CONFIG_DIR, PROJECT_ROOT, run_cli, written_files

DEFAULT = str(CONFIG_DIR / "default.yaml")


def test_config_dir_is_the_clones_configs() -> None:
    """In a source tree the packaged configs are its own configs/ folder."""
    assert config_dir() == PROJECT_ROOT / "configs"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], ["fit", "--config", DEFAULT]),
        (["fit", "--optimizer.lr", "0.1"], ["fit", "--config", DEFAULT, "--optimizer.lr", "0.1"]),
        (["test", "--ckpt_path", "x.ckpt"], ["test", "--config", DEFAULT, "--ckpt_path", "x.ckpt"]),
        (["--help"], ["--help"]),
    ],
)
def test_default_config_is_inserted_when_no_config_is_given(
    args: list[str], expected: list[str], in_tmp_dir: Path
) -> None:
    """Any subcommand without a --config starts from configs/default.yaml; `--help` alone does
    not."""
    assert prepare(args) == expected


def test_packaged_configs_are_found_from_any_folder(in_tmp_dir: Path) -> None:
    """`mtlkd/base.yaml` and `configs/mtlkd/base.yaml` name the packaged file from an empty
    folder; a file of that name in the working folder wins; `--config=` works too."""
    packaged = str(CONFIG_DIR / "mtlkd" / "base.yaml")
    assert resolve_config("mtlkd/base.yaml") == packaged
    assert resolve_config("configs/mtlkd/base.yaml") == packaged
    assert prepare(["fit", "--config=mtlkd/base.yaml"]) == ["fit", f"--config={packaged}"]
    local = in_tmp_dir / "configs" / "mtlkd" / "base.yaml"
    local.parent.mkdir(parents=True)
    local.write_text("trainer: {}\n")
    assert resolve_config("configs/mtlkd/base.yaml") == "configs/mtlkd/base.yaml"


def test_missing_config_names_the_file(in_tmp_dir: Path) -> None:
    """A config found nowhere raises naming the value and both places looked in."""
    with pytest.raises(MissingConfig, match=r"^config: no file configs/nope\.yaml \(looked in"):
        prepare(["fit", "--config", "configs/nope.yaml"])


def test_nearest_option_and_wrapper_hints() -> None:
    """An abbreviation gets the option it abbreviates; an unrelated name gets no guess; an
    option a wrapper optimizer lacks points to base_optimizer only for wrappers."""
    options = ["--trainer.max_epochs", "--trainer.max_steps", "--data.batch_size"]
    message = "unrecognized arguments: --trainer.max_epoch 5"
    assert nearest_option(message, options) == " (did you mean --trainer.max_epochs?)"
    assert nearest_option("unrecognized arguments: --zzz 1", options) == ""
    sam = "Problem with given class_path 'optiforge.optimizers.SAM':\n  Option 'lr' is not accepted"
    assert wrapped_option_hint(sam) == (
        " (a wrapper optimizer takes it as --optimizer.base_optimizer.lr)"
    )
    adam = "Problem with given class_path 'torch.optim.Adam':\n  Option 'rho' is not accepted"
    assert wrapped_option_hint(adam) == ""


def test_lr_bound_is_the_optimizers_own() -> None:
    """BayesCurvature refuses lr = 0, so its bound is > 0; SGD accepts it (>= 0)."""
    assert lr_bound("optiforge.optimizers.BayesCurvature", ">= 0") == "> 0"
    assert lr_bound("torch.optim.SGD", ">= 0") == ">= 0"


# (arguments, the one line expected on stderr after "train.py fit: error: ")
MISTAKES = {
    "missing config": (
        ["fit", "--config", "configs/nope.yaml"],
        "config: no file configs/nope.yaml",
    ),
    "abbreviated option": (
        ["fit", "--trainer.max_epoch", "5"],
        "unrecognized arguments: --trainer.max_epoch 5 (did you mean --trainer.max_epochs?)",
    ),
    "lr on SAM": (
        ["fit", "--optimizer", "optiforge.optimizers.SAM", "--optimizer.lr", "0.1"],
        "optimizer: Option 'lr' is not accepted (a wrapper optimizer takes it as "
        "--optimizer.base_optimizer.lr)",
    ),
    "negative lr on BayesCurvature": (
        ["fit", "--optimizer", "optiforge.optimizers.BayesCurvature", "--optimizer.lr", "-1"],
        "optimizer.init_args.lr must be > 0, got -1.0",
    ),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_mistake_is_one_line_and_writes_nothing(
    case: str, in_tmp_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI as a user calls it (in this process): exit status 2, one stderr line with the
    expected message after the program and subcommand, nothing written in the working folder."""
    args, expected = MISTAKES[case]
    with pytest.raises(SystemExit) as stop:
        run_cli(*args)
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2
    assert len(lines) == 1 and f" fit: error: {expected}" in lines[0], lines
    assert written_files(in_tmp_dir) == []
