"""Vocabulary, contiguous splits, windows and seeded sampling of the char-level text data."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from optiforge.datamodules import TinyShakespeareDataModule
from optiforge.datamodules.tinyshakespeare import WindowSampler
from optiforge.problems.data_paths import data_path

REAL_FILE = data_path("tinyshakespeare/input.txt")
TEXT = "".join(chr(ord("a") + (i * 7) % 10) for i in range(200))  # 10 symbols, 200 chars


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def prepared(path: Path, **kwargs: int | float) -> TinyShakespeareDataModule:
    data = TinyShakespeareDataModule(path=str(path), **kwargs)  # type: ignore[arg-type]
    data.setup("fit")
    return data


def test_vocabulary_and_contiguous_splits_of_a_tiny_file(text_file: Path) -> None:
    """200 chars, 5 % / 5 %: train = first 180, val = next 10, test = last 10; T = 4 gives
    176 training offsets and 2 disjoint windows in val and in test."""
    data = prepared(text_file, context_length=4, train_windows_per_epoch=16)
    assert data.vocab == list("abcdefghij")
    assert data.vocab_size == 10
    assert [len(data.splits[s].ids) for s in ("train", "val", "test")] == [180, 10, 10]
    assert data.decode(data.splits["val"].ids) == TEXT[180:190]
    assert data.decode(data.splits["test"].ids) == TEXT[190:]
    assert [len(data.splits[s]) for s in ("train", "val", "test")] == [176, 2, 2]


def test_real_file_vocabulary_and_split_sizes() -> None:
    """tinyshakespeare: 1,115,394 chars, 65 symbols; val/test int(5 %) = 55,769 chars each."""
    data = prepared(REAL_FILE)
    assert data.vocab_size == 65
    assert data.vocab[:3] == ["\n", " ", "!"]
    sizes = [len(data.splits[s].ids) for s in ("train", "val", "test")]
    assert sizes == [1_115_394 - 2 * 55_769, 55_769, 55_769]
    assert len(data.splits["val"]) == 871  # ceil((55,769 - 64) / 64) disjoint windows


def test_default_file_follows_optiforge_data(
    text_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With OPTIFORGE_DATA set and no path, the file under `<it>/tinyshakespeare/` is read."""
    (text_file.parent / "tinyshakespeare").mkdir()
    text_file.rename(text_file.parent / "tinyshakespeare" / "input.txt")
    monkeypatch.setenv("OPTIFORGE_DATA", str(text_file.parent))
    data = TinyShakespeareDataModule(context_length=4, train_windows_per_epoch=16)
    data.setup("fit")
    assert data.vocab == list("abcdefghij")


def test_windows_have_the_shape_and_targets_are_shifted_by_one(text_file: Path) -> None:
    """Every training batch is [B, T]; targets are the next characters of the same text."""
    data = prepared(text_file, context_length=5, batch_size=3, train_windows_per_epoch=12)
    batches = list(data.train_dataloader())
    assert len(batches) == 4
    train_text = TEXT[:180]
    for inputs, targets in batches:
        assert inputs.shape == targets.shape == (3, 5)
        assert torch.equal(inputs[:, 1:], targets[:, :-1])
        for row_in, row_out in zip(inputs, targets, strict=True):
            window = data.decode(row_in) + data.decode(row_out[-1:])
            assert window in train_text
    val_inputs, val_targets = next(iter(data.val_dataloader()))
    assert data.decode(val_inputs[0]) == TEXT[180:185]
    assert data.decode(val_targets[0]) == TEXT[181:186]


def test_same_seed_same_windows_other_seed_or_epoch_other_windows(text_file: Path) -> None:
    """The training windows are a function of (seed, epoch) only."""

    def starts(seed: int, epoch: int) -> list[int]:
        data = prepared(text_file, context_length=4, train_windows_per_epoch=32, seed=seed)
        loader = data.train_dataloader()
        loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
        return list(loader.sampler)

    assert starts(3, 0) == starts(3, 0)
    assert len(starts(3, 0)) == 32
    assert starts(3, 0) != starts(4, 0)
    assert starts(3, 0) != starts(3, 1)


def test_two_ranks_together_see_the_single_process_windows(text_file: Path) -> None:
    """Rank r of 2 takes every other index of the 1-process order, cut to half the windows."""
    data = prepared(text_file, context_length=4, train_windows_per_epoch=20)
    single = list(WindowSampler(data.splits["train"], 20, 1, 0, seed=5))
    ranks = [list(WindowSampler(data.splits["train"], 20, 2, r, seed=5)) for r in (0, 1)]
    assert [len(r) for r in ranks] == [10, 10]
    assert sorted(ranks[0] + ranks[1]) == sorted(single)


def test_encode_round_trip_and_unknown_character(text_file: Path) -> None:
    """encode/decode round-trip a word; a character outside the vocabulary raises."""
    data = prepared(text_file, context_length=4, train_windows_per_epoch=4)
    assert data.decode(data.encode("jabba")) == "jabba"
    with pytest.raises(ValueError, match="'z' is not in the vocabulary"):
        data.encode("az")


def test_checkpoint_state_rejects_another_vocabulary(text_file: Path) -> None:
    """The vocabulary goes into the checkpoint; resuming on a different text fails."""
    data = prepared(text_file, context_length=4, train_windows_per_epoch=4)
    assert data.state_dict() == {"vocab": "abcdefghij"}
    data.load_state_dict({"vocab": "abcdefghij"})
    with pytest.raises(ValueError, match="data.path"):
        data.load_state_dict({"vocab": "abc"})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("context_length", 0),
        ("batch_size", 0),
        ("eval_batch_size", 0),
        ("train_windows_per_epoch", 0),
        ("val_fraction", 0.0),
        ("test_fraction", 1.0),
        ("num_workers", -1),
    ],
)
def test_bad_arguments_name_the_field(text_file: Path, field: str, value: float) -> None:
    """Each out-of-range size, fraction or worker count raises naming data.<field>."""
    with pytest.raises(ValueError, match=f"data.{field}"):
        TinyShakespeareDataModule(path=str(text_file), **{field: value})  # type: ignore[arg-type]


def test_bad_data_and_sizes_name_the_field(text_file: Path, tmp_path: Path) -> None:
    """Missing file, fractions summing to 1, too many windows, windows longer than a split."""
    with pytest.raises(ValueError, match="data.path"):
        TinyShakespeareDataModule(path=str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="data.val_fraction \\+ data.test_fraction"):
        TinyShakespeareDataModule(path=str(text_file), val_fraction=0.5, test_fraction=0.5)
    with pytest.raises(ValueError, match="data.train_windows_per_epoch must be <= 176"):
        prepared(text_file, context_length=4, train_windows_per_epoch=177)
    with pytest.raises(ValueError, match="data.context_length=10"):
        prepared(text_file, context_length=10, train_windows_per_epoch=4)
    with pytest.raises(RuntimeError, match="after setup"):
        _ = TinyShakespeareDataModule(path=str(text_file)).vocab_size
