"""Needle-in-a-haystack text: exact lengths, needles where stated, filler kept in order."""

from __future__ import annotations

import random
import re
import shlex
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.benchmarks import kv_needle_finetune as needle_finetune
from optiforge.lightning_modules.kv_lm.needles import (
    haystack,
    needle_line,
    needle_task,
    random_pairs,
    training_document,
)
from optiforge.lightning_modules.kv_lm.weights import SHIPPED, load_weights

FILLER = "".join(random.Random(0).choices(string.ascii_lowercase + " \n", k=3000))


@settings(max_examples=40, deadline=None)
@given(length=st.integers(60, 600), pairs=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_haystack_places_every_needle_in_a_contiguous_filler_span(
    length: int, pairs: int, seed: int
) -> None:
    """`length` characters; each pair's line at its returned start; with the lines cut out, what
    remains is one contiguous span of the filler."""
    rng = random.Random(seed)
    drawn = random_pairs(rng, pairs)
    text, starts = haystack(FILLER, rng, length, drawn)
    assert len(text) == length and starts == sorted(starts)
    rest, previous = [], 0
    for start, (key, value) in zip(starts, drawn, strict=True):
        line = needle_line(key, value)
        assert text[start : start + len(line)] == line
        rest.append(text[previous:start])
        previous = start + len(line)
    rest.append(text[previous:])
    assert "".join(rest) in FILLER


def test_task_and_control_by_hand() -> None:
    """The prompt has the stated length and ends in "\\nKEYS: "; the answer follows that key at
    needle_start; the control prompt asks the same way but lacks the asked line."""
    task = needle_task(FILLER, random.Random(3), 200, pairs=3)
    key = task.prompt[-7:-2].strip("\n")
    assert len(task.prompt) == 200 and task.prompt.endswith(f"\n{key}: ") and len(key) == 4
    assert task.prompt[task.needle_start :].startswith(needle_line(key, task.answer))
    assert task.answer.islower() and len(task.answer) == 4
    control = needle_task(FILLER, random.Random(3), 200, pairs=3, control=True)
    assert control.answer == task.answer and control.needle_start == -1
    assert f"{key}: {task.answer}" not in control.prompt and len(control.prompt) == 200


def test_training_document_repeats_every_pair() -> None:
    """Each pair's line appears twice, the second time in the tail of repeats."""
    rng = random.Random(4)
    document = training_document(FILLER, rng, 150, 3)
    lines = [line for line in document.split("\n") if line[:4].isupper() and ": " in line]
    assert len(document) == 150 and len(lines) == 6 and sorted(lines[:3]) == sorted(lines[3:])


def test_too_short_a_haystack_names_length() -> None:
    """A length without room for the needles is refused naming `length`."""
    with pytest.raises(ValueError, match="length must leave room for the needles"):
        haystack(FILLER, random.Random(0), 20, random_pairs(random.Random(0), 3))


def test_finetune_writes_loadable_weights(tmp_path: Path) -> None:
    """Two steps on tiny documents: a weights file that load_weights reads, two steps more than
    the shipped model, its evaluation rows in [0, 1]; a zero step count names --steps."""
    out = tmp_path / "needle.pt"
    found = needle_finetune.main(
        ["--steps", "2", "--batch", "2", "--length", "64", "--eval-every", "1"]
        + ["--eval-tasks", "2", "--out", str(out)]
    )
    _, card = load_weights(out)
    assert card["global_step"] == load_weights(SHIPPED)[1]["global_step"] + 2
    assert [row["step"] for row in found["history"]] == [1, 2]
    assert all(0.0 <= row["needle_accuracy"] <= 1.0 for row in found["history"])
    with pytest.raises(SystemExit):
        needle_finetune.main(["--steps", "0"])


def test_documented_finetune_commands_parse() -> None:
    """Every `python -m ...needle_finetune` command in README.md and docs/ parses (at least one
    is documented)."""
    root = Path(__file__).resolve().parents[2]
    pattern = re.compile(r"python -m optiforge\.benchmarks\.kv_needle_finetune([^\n`]*)")
    found = [
        shlex.split(match.group(1))
        for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]
        for match in pattern.finditer(path.read_text())
    ]
    assert found
    for arguments in found:
        needle_finetune.make_parser().parse_args(arguments)
