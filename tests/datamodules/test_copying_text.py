"""The copying mixture: documents by share, copy-only targets weighted, warm-up epochs of
repeated strings, held-out needle prompts, and one-line refusals of bad settings."""

from __future__ import annotations

import pytest
import torch

from optiforge.datamodules import CopyingDataModule
from optiforge.problems.data_paths import data_path

REAL_FILE = str(data_path("tinyshakespeare/input.txt"))


@pytest.fixture(scope="module")
def data() -> CopyingDataModule:
    module = CopyingDataModule(
        path=REAL_FILE,
        context_length=128,
        batch_size=4,
        repeat_share=0.2,
        key_value_share=0.2,
        needle_share=0.2,
        copy_weight=5.0,
        retrieval_tasks=3,
    )
    module.setup("fit")
    return module


def is_needle_line(line: str) -> bool:
    """A complete "KEYS: vals." line."""
    return len(line) == 11 and line[:4].isupper() and line[4:6] == ": " and line.endswith(".")


def kind(text: str) -> str:
    """Which document a text is: a repeated unit, key-value lines only, needle lines asked
    again in Shakespeare, or plain Shakespeare."""
    if text.islower() and text.isalpha():
        return "repeat"
    lines = text.split("\n")
    if all(is_needle_line(line) for line in lines[:-1]):
        return "key_value"
    return "needle" if any(is_needle_line(line) for line in lines) else "plain"


def test_items_weigh_exactly_the_copy_only_targets(data: CopyingDataModule) -> None:
    """Targets are the inputs shifted by one; a target weighs copy_weight exactly where the
    document marks a copy-only character, 1 elsewhere (plain windows: all 1)."""
    documents = data.documents
    kinds = set()
    for index in range(40):
        text, copied = documents.document(index)
        inputs, targets, weights = documents[index]
        kinds.add(kind(text))
        assert data.decode(torch.cat([inputs, targets[-1:]])) == text and len(text) == 129
        assert torch.equal(inputs[1:], targets[:-1])
        expected = torch.ones(128)
        expected[[i - 1 for i in copied]] = 5.0
        assert torch.equal(weights, expected)
        assert kind(text) != "plain" or not copied
    assert kinds == {"repeat", "key_value", "needle", "plain"}


def test_shares_and_determinism(data: CopyingDataModule) -> None:
    """Over 600 items the kinds follow the shares 0.2 / 0.2 / 0.2 / 0.4 (within 0.06); an item
    is the same document on every call."""
    counts = {"repeat": 0, "key_value": 0, "needle": 0, "plain": 0}
    for index in range(600):
        counts[kind(data.documents.document(index)[0])] += 1
    shares = {"repeat": 0.2, "key_value": 0.2, "needle": 0.2, "plain": 0.4}
    assert all(abs(counts[name] / 600 - share) < 0.06 for name, share in shares.items())
    assert data.documents.document(7) == data.documents.document(7)


def test_warmup_epochs_draw_only_repeated_strings() -> None:
    """With warmup_epochs 2, the sampler's set_epoch(1) makes every item a repeated string and
    set_epoch(2) restores the mixture."""
    module = CopyingDataModule(path=REAL_FILE, context_length=128, warmup_epochs=2)
    module.setup("fit")
    loader = module.train_dataloader()
    loader.sampler.set_epoch(1)
    assert all(kind(module.documents.document(i)[0]) == "repeat" for i in range(50))
    loader.sampler.set_epoch(2)
    assert {kind(module.documents.document(i)[0]) for i in range(50)} != {"repeat"}
    inputs, targets, weights = next(iter(loader))
    assert inputs.shape == targets.shape == weights.shape == (16, 128)


def test_retrieval_task_asks_held_out_needles(data: CopyingDataModule) -> None:
    """Prompts of 480 characters of validation text with one needle line, ending in its
    query; the answers are the asked values; the same every call."""
    prompts, answers = data.retrieval_task("val")
    again = data.retrieval_task("val")
    assert prompts.shape == (3, 480) and answers.shape == (3, 4)
    assert torch.equal(prompts, again[0]) and torch.equal(answers, again[1])
    val_text = data.decode(data.splits["val"].ids)
    for prompt, answer in zip(prompts, answers, strict=True):
        text, value = data.decode(prompt), data.decode(answer)
        key = text[-6:-2]
        assert text.endswith(f"\n{key}: ") and f"\n{key}: {value}.\n" in text
        filler = text[:-7].replace(f"\n{key}: {value}.\n", "")
        assert filler in val_text


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"repeat_share": 1.5}, "data.repeat_share must be in [0, 1]"),
        ({"repeat_share": 0.6, "needle_share": 0.6}, "repeat_share + data.key_value_share"),
        ({"key_value_share": -0.1}, "data.key_value_share must be in [0, 1]"),
        ({"max_pairs": 0}, "data.max_pairs must be >= 1"),
        ({"max_pairs": 3, "context_length": 64}, "data.max_pairs must be >= 1 with room"),
        ({"copy_weight": 0.0}, "data.copy_weight must be > 0"),
        ({"warmup_epochs": -1}, "data.warmup_epochs must be >= 0"),
        ({"retrieval_tasks": 0}, "data.retrieval_tasks must be >= 1"),
    ],
)
def test_bad_settings_name_the_field(settings: dict, field: str) -> None:
    """Each bad value is refused at construction, naming its field."""
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("+", r"\+")):
        CopyingDataModule(path=REAL_FILE, **settings)
