"""Weights files are checked before use: existence, torch format, and fit to the module."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from optiforge.lightning_modules.weights_file import read_state_dict, weights_mismatch


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
