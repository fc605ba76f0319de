"""Weights files are checked before use: existence, torch format, and fit to the module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from optiforge.lightning_modules.classifier import Classifier
from optiforge.lightning_modules.hephaestus import Forge
from optiforge.lightning_modules.weights_file import (
    load_model,
    read_state_dict,
    read_weights_file,
    save_weights_file,
    weights_mismatch,
)


def test_state_dict_and_lightning_checkpoint_both_read(tmp_path: Path) -> None:
    """A plain state dict and a checkpoint's "state_dict" give the same tensors."""
    module = nn.Linear(3, 2)
    plain, checkpoint = tmp_path / "plain.pt", tmp_path / "model.ckpt"
    torch.save(module.state_dict(), plain)
    torch.save({"state_dict": module.state_dict(), "epoch": 0}, checkpoint)
    for path in (plain, checkpoint):
        state = read_state_dict("model.weights", str(path), nn.Linear(3, 2))
        assert torch.equal(state["weight"], module.weight)


def test_bad_files_raise_naming_the_field(tmp_path: Path) -> None:
    """Missing file, non-torch file, non-dict content: one ValueError naming the field each."""
    text, number = tmp_path / "notes.txt", tmp_path / "number.pt"
    text.write_text("hello\n")
    torch.save(3, number)
    for path, reason in (
        (tmp_path / "none.pt", "no file at"),
        (text, "is not a torch file"),
        (number, "holds a int"),
    ):
        with pytest.raises(ValueError, match=rf"^model\.weights: .*{reason}"):
            read_state_dict("model.weights", str(path), nn.Linear(3, 2))


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))
def test_mismatch_is_none_exactly_when_shapes_agree(a: int, b: int, c: int, d: int) -> None:
    """Linear(a, b) weights fit Linear(c, d) iff (a, b) == (c, d); otherwise the shape is named."""
    mismatch = weights_mismatch(nn.Linear(a, b).state_dict(), nn.Linear(c, d))
    if (a, b) == (c, d):
        assert mismatch is None
    else:
        assert mismatch is not None and mismatch.startswith("shape: weight")


def test_other_keys_are_listed_as_missing_and_unexpected() -> None:
    """A state dict of another architecture names missing and unexpected keys."""
    mismatch = weights_mismatch({"w": torch.zeros(1)}, nn.Linear(1, 1))
    assert mismatch == "missing: weight, bias; unexpected: w"


# ---- the shipped-weights format ------------------------------------------------------------

METADATA = {"training_command": "python train.py fit", "commit": "abc1234", "data": "toy"}
SMALL = {"input_shape": (1, 2, 2), "num_classes": 3, "architecture": "mlp", "widths": (5,)}


def small_file(path: Path, **changes: object) -> Path:
    """A seeded small `Classifier` saved in the shipped format, with one result; `changes`
    replace top-level fields of the record after saving (to make it wrong)."""
    torch.manual_seed(0)
    model = Classifier(**SMALL)
    results = [{"metric": "accuracy", "value": 0.5, "command": "python train.py test"}]
    save_weights_file(path, Classifier, SMALL, model.state_dict(), METADATA | {"results": results})
    if changes:
        record = torch.load(path, weights_only=True)
        torch.save(record | changes, path)
    return path


def test_round_trip_builds_the_same_model(tmp_path: Path) -> None:
    """save -> read gives the class path, init args, metadata and tensors back; `load_model`
    rebuilds a model with equal outputs, and reading does not move the global seed."""
    path = small_file(tmp_path / "small.pt")
    torch.manual_seed(0)
    reference = Classifier(**SMALL).eval()
    weights = read_weights_file(path, expected=Classifier)
    assert weights.class_path == "optiforge.lightning_modules.classifier.Classifier"
    assert weights.init_args == SMALL and weights.metadata["commit"] == "abc1234"
    assert weights.parameter_count == sum(p.numel() for p in reference.state_dict().values())
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    model = load_model(path)
    assert torch.equal(torch.rand(2), expected)
    inputs = torch.randn(4, 1, 2, 2)
    assert torch.equal(model(inputs), reference(inputs)) and not model.training


def truncated(path: Path) -> Path:
    """`path` cut to half its bytes (an interrupted copy)."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def missing_key(path: Path) -> Path:
    """`path` with one tensor of its state dict removed."""
    record = torch.load(path, weights_only=True)
    record["state_dict"].popitem()
    torch.save(record, path)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, r"no file "),
        (lambda p: (torch.save(nn.Linear(2, 2).state_dict(), p), p)[1], "not an optiforge-weights"),
        (
            lambda p: truncated(small_file(p)),
            r"not a readable torch file \(RuntimeError: PytorchStreamReader",
        ),
        (lambda p: missing_key(small_file(p)), r"weights do not fit \(missing: "),
        (lambda p: small_file(p, version=2), "format version 2, this optiforge reads 1"),
        (lambda p: small_file(p, class_path="os.system"), r"'os.system' is outside optiforge"),
        (
            lambda p: small_file(p, class_path="optiforge.lightning_modules.classifier.Nope"),
            "names no class",
        ),
        (
            lambda p: small_file(p, class_path="optiforge.lightning_modules.classifier.nn"),
            "is not a LightningModule",
        ),
        (lambda p: small_file(p, metadata={"results": []}), r"metadata lacks \['training_command"),
    ],
    ids=[
        "missing",
        "not ours",
        "truncated",
        "missing key",
        "version",
        "outside",
        "no class",
        "not a module",
        "meta",
    ],
)
def test_a_wrong_file_fails_in_one_line_naming_it(make, message: str, tmp_path: Path) -> None:
    """Each kind of wrong file raises one ValueError line that starts with the field and names
    the file and what is wrong."""
    path = make(tmp_path / "bad.pt")
    with pytest.raises(ValueError) as error:
        load_model(path, field="model.weights")
    text = str(error.value)
    assert "\n" not in text and text.startswith("model.weights: ") and str(path) in text
    assert re.search(message, text), text


def test_a_file_of_another_class_is_refused(tmp_path: Path) -> None:
    """`expected` names the class the caller needs; a file of another one names both."""
    path = small_file(tmp_path / "small.pt")
    with pytest.raises(ValueError, match=r"small.pt: holds a Classifier, this model is a Forge$"):
        read_weights_file(path, expected=Forge)


def test_unpickling_is_refused(tmp_path: Path) -> None:
    """A file that needs arbitrary unpickling (a pickled object, here a whole module) is not
    loaded: `weights_only=True` stops it before any of its code could run."""
    path = tmp_path / "pickled.pt"
    torch.save({"format": "optiforge-weights", "model": nn.Linear(2, 2)}, path)
    with pytest.raises(
        ValueError, match=r"not a readable torch file \(UnpicklingError: Weights only load failed"
    ):
        read_weights_file(path)
