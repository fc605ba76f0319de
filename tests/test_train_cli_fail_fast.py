"""User mistakes found before training: one line on stderr naming the field, exit status 2,
and nothing written (no wandb/, no checkpoint folder, no lightning_logs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from tests.cli_helpers import config_args, run_cli, written_files

MISSING = "missing/nothing.ckpt"


def fake_checkpoint(path: Path, class_path: str | None) -> Path:
    """A Lightning-style checkpoint of a module with one `w` weight (recording `class_path`)."""
    hyper_parameters = {} if class_path is None else {"_class_path": class_path}
    checkpoint = {
        "pytorch-lightning_version": "2.6.6",
        "state_dict": {"w": torch.zeros(2)},
        "hyper_parameters": hyper_parameters,
    }
    torch.save(checkpoint, path)
    return path


def inputs(folder: Path) -> dict[str, str]:
    """The bad input files the cases point at, made in `folder` (outside the run directory)."""
    folder.mkdir()
    (folder / "empty_data").mkdir()
    (folder / "notes.txt").write_text("not a checkpoint\n")
    return {
        "empty": str(folder / "empty_data"),
        "text": str(folder / "notes.txt"),
        "forge": str(fake_checkpoint(folder / "forge.ckpt", "optiforge.lightning_modules.Forge")),
        "unnamed": str(fake_checkpoint(folder / "unnamed.ckpt", None)),
    }


REFINE_NO_MORPH = ["--model.init_args.morph_weights", "null"]
# case: (experiment: configs joined by " + ", extra arguments ({input} names a file of `inputs`),
# env, expected field)
CASES = {
    "gnutella08 missing (OPTIFORGE_DATA)": (
        "hephaestus/base + hephaestus/refine + hephaestus/linear + hephaestus/gnutella08",
        REFINE_NO_MORPH,
        {"OPTIFORGE_DATA": "{empty}"},
        "data.gnutella_dir",
    ),
    "gnutella08 missing (config path)": (
        "hephaestus/base + hephaestus/refine + hephaestus/linear + hephaestus/gnutella08",
        [*REFINE_NO_MORPH, "--data.init_args.gnutella_dir", "{empty}"],
        {},
        "data.gnutella_dir",
    ),
    "compas missing": (
        "testbeds/compas_mlp + optimizers/adamw_compas",
        [],
        {"OPTIFORGE_DATA": "{empty}"},
        "data.path",
    ),
    "tinyshakespeare missing": (
        "testbeds/char_lm + optimizers/adamw_lm",
        [],
        {"OPTIFORGE_DATA": "{empty}"},
        "data.path",
    ),
    "ckpt_path missing": ("default", ["--ckpt_path", MISSING], {}, "ckpt_path"),
    "ckpt_path not a checkpoint": ("default", ["--ckpt_path", "{text}"], {}, "ckpt_path"),
    "ckpt_path of another module class": ("default", ["--ckpt_path", "{forge}"], {}, "ckpt_path"),
    "ckpt_path weights of another module": (
        "default",
        ["--ckpt_path", "{unnamed}"],
        {},
        "ckpt_path",
    ),
    "refine's morph checkpoint missing": (
        "hephaestus/base + hephaestus/refine + hephaestus/linear",
        ["--model.init_args.morph_weights", MISSING],
        {},
        "model.morph_weights",
    ),
    "morph run without its forge weights on the command line": (
        "hephaestus/base + hephaestus/morph + hephaestus/linear",
        [],
        {},
        "model.forge_weights: no file at 'optiforge/<forge run id>/checkpoints/last.ckpt'",
    ),
    "refine run without its morph weights on the command line": (
        "hephaestus/base + hephaestus/refine + hephaestus/linear",
        [],
        {},
        "model.morph_weights: no file at 'optiforge/<morph run id>/checkpoints/last.ckpt'",
    ),
    "refine's morph checkpoint is a forge checkpoint": (
        "hephaestus/base + hephaestus/refine + hephaestus/linear",
        ["--model.init_args.morph_weights", "{forge}"],
        {},
        "model.morph_weights",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_user_error_is_one_line_before_anything_is_written(
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """`train.py fit` ends with status 2 and one stderr line naming the field; the run
    directory stays empty, though W&B is offline (it would write wandb/ once started)."""
    experiment, extra, env, field = CASES[case]
    files = inputs(tmp_path / "inputs")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)
    monkeypatch.setenv("WANDB_MODE", "offline")
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(**files))
    arguments = [arg.format(**files) for arg in extra]
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", *config_args(*experiment.split(" + ")), *arguments)
    stderr = capfd.readouterr().err
    assert exit_info.value.code == 2, stderr[-3000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr[-3000:]
    assert re.match(r"\S+ fit: error: ", lines[0]) and field in lines[0], lines[0]
    assert written_files(run_dir) == []
