"""Needle-in-a-haystack text for the char LM: key-value lines placed in Shakespeare filler.

A needle is the line "\\nKEYS: vals.\\n" (`key_length` capitals, `value_length` lowercase
letters, drawn at random); a prompt is filler text with `pairs` needles inserted at random
depths, ending in the query "\\nKEYS: " for one of them; the answer is its value. Only the
characters of the char LM's vocabulary are used. `training_document`, `key_value_document` and
`repeat_document` are fine-tuning texts whose marked characters only copying from the context
can predict.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass


@dataclass(frozen=True)
class NeedleTask:
    """A prompt ending in a query, its answer, and where the asked needle starts."""

    prompt: str
    answer: str
    needle_start: int


def needle_line(key: str, value: str) -> str:
    """The text of one key-value pair."""
    return f"\n{key}: {value}.\n"


def random_pairs(
    rng: random.Random, pairs: int, key_length: int = 4, value_length: int = 4
) -> list[tuple[str, str]]:
    """`pairs` distinct random keys (capitals) with random values (lowercase)."""
    keys: set[str] = set()
    while len(keys) < pairs:
        keys.add("".join(rng.choices(string.ascii_uppercase, k=key_length)))
    return [(key, "".join(rng.choices(string.ascii_lowercase, k=value_length))) for key in keys]


def haystack(
    filler: str, rng: random.Random, length: int, pairs: list[tuple[str, str]]
) -> tuple[str, list[int]]:
    """A random span of `filler` with the pairs' lines inserted at random depths, `length`
    characters in all; returns the text and where each pair's line starts."""
    lines = [needle_line(key, value) for key, value in pairs]
    room = length - sum(len(line) for line in lines)
    if room < 0 or room > len(filler):
        raise ValueError(f"length must leave room for the needles and fit the filler, got {length}")
    start = rng.randrange(len(filler) - room + 1)
    text = filler[start : start + room]
    cuts = sorted(rng.randrange(room + 1) for _ in lines)
    pieces, starts, previous, offset = [], [], 0, 0
    for cut, line in zip(cuts, lines, strict=True):
        pieces.append(text[previous:cut])
        offset += cut - previous
        starts.append(offset)
        pieces.append(line)
        offset += len(line)
        previous = cut
    pieces.append(text[previous:])
    return "".join(pieces), starts


def needle_task(
    filler: str,
    rng: random.Random,
    length: int,
    pairs: int = 4,
    key_length: int = 4,
    value_length: int = 4,
    control: bool = False,
) -> NeedleTask:
    """A haystack of `length` characters (query included) asking for one of `pairs` needles;
    `control` leaves the asked needle out (filler takes its place, needle_start is -1), so only
    a guess can answer."""
    drawn = random_pairs(rng, pairs, key_length, value_length)
    asked = rng.randrange(pairs)
    query = f"\n{drawn[asked][0]}: "
    placed = [pair for i, pair in enumerate(drawn) if not (control and i == asked)]
    text, starts = haystack(filler, rng, length - len(query), placed)
    return NeedleTask(text + query, drawn[asked][1], -1 if control else starts[asked])


def training_document(
    filler: str, rng: random.Random, length: int, pairs: int, repeats: int = 1
) -> tuple[str, list[int]]:
    """A haystack followed by every pair's line `repeats` times more (shuffled each time):
    `length` characters of fine-tuning text, and the positions of the repeated values, the
    characters that only copying from the context can predict."""
    drawn = random_pairs(rng, pairs)
    lines = [
        (key, value, needle_line(key, value))
        for _ in range(repeats)
        for key, value in rng.sample(drawn, len(drawn))
    ]
    tail = "".join(line for _, _, line in lines)
    text, _ = haystack(filler, rng, length - len(tail), drawn)
    copied, offset = [], len(text)
    for key, value, line in lines:
        value_start = offset + len(key) + 3  # after "\n", the key and ": "
        copied.extend(range(value_start, value_start + len(value)))
        offset += len(line)
    return text + tail, copied


def repeat_document(
    rng: random.Random, length: int, shortest: int = 6, longest: int = 20
) -> tuple[str, list[int]]:
    """A random lowercase string of `shortest`..`longest` letters repeated to `length`
    characters, and the positions after its first occurrence (predictable only by copying):
    the densest copying signal, which teaches an LM in-context copying fastest."""
    if not 1 <= shortest <= longest < length:
        raise ValueError(
            f"need 1 <= shortest <= longest < length, got {shortest}, {longest}, {length}"
        )
    unit = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(shortest, longest)))
    text = (unit * (length // len(unit) + 1))[:length]
    return text, list(range(len(unit), length))


def key_value_document(
    rng: random.Random, length: int, most_pairs: int = 8
) -> tuple[str, list[int]]:
    """Only key-value lines ("KEYS: vals.\\n"), drawn with replacement from 2..`most_pairs`
    random pairs, cut to `length` characters, and the positions of the values of keys already
    seen: the needle's lookup at its densest (about a quarter of the characters are copy-only
    at 512 characters), which teaches it far faster than needles in filler."""
    if most_pairs < 2:
        raise ValueError(f"most_pairs must be >= 2, got {most_pairs}")
    drawn = random_pairs(rng, rng.randint(2, most_pairs))
    pieces, copied, seen, offset = [], [], set(), 0
    while offset < length:
        key, value = rng.choice(drawn)
        if key in seen:
            value_start = offset + len(key) + 2  # after the key and ": "
            copied.extend(range(value_start, value_start + len(value)))
        seen.add(key)
        line = needle_line(key, value)[1:]
        pieces.append(line)
        offset += len(line)
    return "".join(pieces)[:length], [i for i in copied if i < length]
