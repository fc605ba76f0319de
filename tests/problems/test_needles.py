"""Needle-in-a-haystack text: exact lengths, needles where stated, filler kept in order."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.needles import (
    haystack,
    key_value_document,
    needle_line,
    needle_task,
    random_pairs,
    repeat_document,
    training_document,
)

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
    """Each pair's line appears twice, the second time in the tail of repeats; the copy-only
    positions are exactly the characters of the repeated values."""
    rng = random.Random(4)
    document, copied = training_document(FILLER, rng, 150, 3)
    lines = [line for line in document.split("\n") if line[:4].isupper() and ": " in line]
    assert len(document) == 150 and len(lines) == 6 and sorted(lines[:3]) == sorted(lines[3:])
    tail_values = "".join(line.split(": ")[1].rstrip(".") for line in lines[3:])
    assert "".join(document[i] for i in copied) == tail_values and len(copied) == 12
    assert min(copied) > document.index(lines[2]) and copied == sorted(copied)


def test_repeat_document_by_hand() -> None:
    """A unit repeated to the length; the positions after its first occurrence are marked."""
    text, copied = repeat_document(random.Random(0), 30, shortest=7, longest=7)
    unit = text[:7]
    assert text == (unit * 5)[:30] and unit.islower() and copied == list(range(7, 30))
    with pytest.raises(ValueError, match="longest < length"):
        repeat_document(random.Random(0), 10, longest=10)


def test_too_short_a_haystack_names_length() -> None:
    """A length without room for the needles is refused naming `length`."""
    with pytest.raises(ValueError, match="length must leave room for the needles"):
        haystack(FILLER, random.Random(0), 20, random_pairs(random.Random(0), 3))


@settings(max_examples=40, deadline=None)
@given(length=st.integers(12, 400), most_pairs=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_key_value_document_marks_values_of_keys_seen_before(
    length: int, most_pairs: int, seed: int
) -> None:
    """Only "KEYS: vals." lines, cut to the length; the marked characters are exactly the values
    of the lines whose key appeared on an earlier line, and each key keeps one value."""
    text, copied = key_value_document(random.Random(seed), length, most_pairs)
    assert len(text) == length
    lines = text.split("\n")
    values: dict[str, str] = {}
    expected, offset = [], 0
    for line in lines:
        if len(line) == 11:  # complete line "KEYS: vals."
            key, value = line[:4], line[6:10]
            assert key.isupper() and value.islower() and values.setdefault(key, value) == value
            if text[:offset].count(f"{key}: "):
                expected.extend(range(offset + 6, offset + 10))
        offset += len(line) + 1
    partial = lines[-1]
    if len(partial) > 6 and text[: offset - len(partial) - 1].count(f"{partial[:4]}: "):
        start = offset - len(partial) - 1 + 6
        expected.extend(range(start, min(start + 4, length)))
    assert copied == expected and len(values) <= most_pairs


def test_key_value_document_needs_two_pairs() -> None:
    """Fewer than two pairs is refused naming most_pairs."""
    with pytest.raises(ValueError, match="most_pairs must be >= 2"):
        key_value_document(random.Random(0), 100, most_pairs=1)
