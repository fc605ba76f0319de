"""MTL-KD weights in the one format: the export command, and wrong files given to train.py."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import lightning as L
import pytest
import torch

from optiforge.lightning_modules import MTLKDStudent, POMOTeacher
from optiforge.lightning_modules.mtlkd.policy_weights import (
    SHIPPED_DIR,
    load_policy,
    main,
    save_weights,
)
from optiforge.lightning_modules.weights_file import read_weights_file
from tests.cli_helpers import PROJECT_ROOT, run_cli, written_files

TINY = {"embed_dim": 16, "num_layers": 2, "num_heads": 4, "ff_dim": 32}
EXPORT = "python -m optiforge.lightning_modules.mtlkd.policy_weights"


def checkpoint(path: Path, data: dict | None = None) -> Path:
    """A Lightning checkpoint of a seeded tiny teacher (with datamodule hyperparameters)."""
    torch.manual_seed(0)
    trainer = L.Trainer(logger=False, enable_checkpointing=False, max_epochs=0)
    trainer.strategy.connect(POMOTeacher(**TINY, feature_scaling="instance"))
    trainer.save_checkpoint(path)
    if data is not None:
        saved = torch.load(path, weights_only=False)
        torch.save(saved | {"datamodule_hyper_parameters": data}, path)
    return path


def test_the_export_command_writes_the_one_format(tmp_path: Path) -> None:
    """The documented export writes a file the generic reader accepts: the teacher's class,
    its architecture, the checkpoint's weights, and metadata recording the training command,
    this checkout's commit, the data convention and the training variants."""
    ckpt = checkpoint(
        tmp_path / "last.ckpt",
        {"convention": "mvmoe", "num_customers": 20, "train_variants": "OVRP"},
    )
    main([str(ckpt), str(tmp_path / "out.pt"), "--training-command", "python train.py fit x"])
    weights = read_weights_file(tmp_path / "out.pt", expected=POMOTeacher)
    assert weights.init_args == {
        **TINY,
        "norm": "instance",
        "logit_clip": 10.0,
        "feature_scaling": "instance",
    }
    state = torch.load(ckpt, weights_only=False)["state_dict"]
    assert all(torch.equal(state[k], weights.state_dict[k]) for k in state)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True
    ).stdout.strip()
    metadata = weights.metadata
    assert metadata["commit"] == (head or "not recorded")
    assert metadata["training_command"] == "python train.py fit x" and metadata["results"] == []
    assert metadata["data"] == "mvmoe instances, n = 20, instance features"
    assert metadata["variants"] == ["OVRP"] and metadata["global_step"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no file"),
        (b"not torch", "not a readable torch file"),
        ({"epoch": 1}, "not a Lightning checkpoint"),
    ],
    ids=["missing", "text", "no weights"],
)
def test_a_bad_checkpoint_ends_the_export_in_one_line(
    content: bytes | dict | None,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A missing file, a file torch cannot read and a dict without weights end the export with
    exit status 2 and one stderr line naming the checkpoint; nothing is written."""
    ckpt = tmp_path / "bad.ckpt"
    if isinstance(content, bytes):
        ckpt.write_bytes(content)
    elif content is not None:
        torch.save(content, ckpt)
    with pytest.raises(SystemExit) as stop:
        main([str(ckpt), str(tmp_path / "out.pt")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{EXPORT}: error: checkpoint: ") and str(ckpt) in lines[0]
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "out.pt").exists()


def wrong_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Wrong `--model.init_args.weights` files for the CVRP teacher config, each with the
    message expected after the file's name."""
    plain = folder / "plain.pt"
    torch.save(POMOTeacher(**TINY).state_dict(), plain)
    student = folder / "student.pt"
    save_weights(MTLKDStudent(embed_dim=16, decoder_layers=1, num_heads=4), student)
    shipped = (SHIPPED_DIR / "teacher_cvrp_mvmoe_n50.pt").read_bytes()
    truncated = folder / "truncated.pt"
    truncated.write_bytes(shipped[: len(shipped) // 2])
    record = torch.load(SHIPPED_DIR / "teacher_cvrp_mvmoe_n50.pt", weights_only=True)
    del record["state_dict"]["policy.encoder.embed_depot.bias"]
    missing = folder / "missing_key.pt"
    torch.save(record, missing)
    return {
        "not ours": (plain, ": not an optiforge-weights file"),
        "wrong class": (student, ": holds a MTLKDStudent, this model is a POMOTeacher"),
        "truncated": (truncated, ": not a readable torch file (RuntimeError: PytorchStreamReader"),
        "missing key": (missing, ": weights do not fit (missing: policy.encoder.embed_depot.bias"),
    }


@pytest.mark.parametrize("case", ["not ours", "wrong class", "truncated", "missing key"])
def test_a_wrong_weights_file_is_one_line_from_train_py(
    case: str, in_tmp_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`train.py test` with the teacher config and a wrong weights file stops with exit status
    2 and one stderr line naming `weights`, the file and what is wrong (no traceback);
    nothing else is written in the working folder."""
    path, expected = wrong_files(in_tmp_dir)[case]
    before = written_files(in_tmp_dir)
    configs = [
        str(PROJECT_ROOT / "configs" / "mtlkd" / n) for n in ("base.yaml", "teacher_cvrp.yaml")
    ]
    with pytest.raises(SystemExit) as stop:
        run_cli(
            "test",
            "--config",
            configs[0],
            "--config",
            configs[1],
            "--model.init_args.weights",
            str(path),
        )
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(lines) == 1, lines
    assert f" test: error: weights: {path}{expected}" in lines[0], lines[0]
    assert written_files(in_tmp_dir) == before


def test_half_storage_halves_the_file_and_loads_the_rounded_weights(tmp_path: Path) -> None:
    """`--half`: every float tensor stored as float16 (the file smaller by 2 bytes per
    weight), the metadata says so, and the loaded float32 policy holds exactly the
    float16-rounded weights."""
    ckpt = checkpoint(tmp_path / "last.ckpt")
    main([str(ckpt), str(tmp_path / "full.pt")])
    main([str(ckpt), str(tmp_path / "half.pt"), "--half"])
    full, half = (tmp_path / "full.pt").stat().st_size, (tmp_path / "half.pt").stat().st_size
    state = torch.load(ckpt, weights_only=False)["state_dict"]
    stored = sum(t.numel() for t in state.values() if t.is_floating_point())
    assert full - half >= 0.9 * 2 * stored
    weights = read_weights_file(tmp_path / "half.pt", expected=POMOTeacher)
    assert weights.metadata["storage"] == "float16"
    floats = {t.dtype for t in weights.state_dict.values() if t.is_floating_point()}
    assert floats == {torch.float16}
    policy = load_policy(tmp_path / "half.pt")
    for name, value in policy.state_dict().items():
        assert value.dtype == torch.float32
        assert torch.equal(value, state[f"policy.{name}"].half().float()), name
