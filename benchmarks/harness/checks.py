"""Value checks every benchmark config gets before any work: numbers finite and positive
(seeds and the fields a benchmark declares `nonnegative` may be 0), sequences non-empty (unless
empty is the default), input paths, alone or in a tuple, that exist (not caches or outputs,
which a run creates).
A benchmark's own `__post_init__` adds what only it knows."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SEED_FIELDS = ("seed", "seeds")
CREATED_PATHS = ("cache", "output", "_dir", "figure")


def _numbers(value: object) -> Iterable[int | float]:
    """The numbers in a field's value (itself, or the entries of a tuple)."""
    entries = value if isinstance(value, tuple | list) else (value,)
    return [v for v in entries if isinstance(v, int | float) and not isinstance(v, bool)]


def value_errors(name: str, value: object, default: object, zero_allowed: bool) -> list[str]:
    """What is wrong with one option's value (none: an empty list)."""
    option = "--" + name.replace("_", "-")
    errors = []
    if isinstance(value, tuple | list) and not value and default not in ((), []):
        errors.append(f"{option}: give at least one value")
    created = any(word in name for word in CREATED_PATHS)
    for path in value if isinstance(value, tuple | list) else (value,):
        if isinstance(path, Path) and not created and not path.exists():
            errors.append(f"{option}: no such file or folder: {path}")
    for number in _numbers(value):
        if not math.isfinite(number):
            errors.append(f"{option}: must be finite, got {number}")
        elif not zero_allowed and number <= 0:
            errors.append(f"{option}: must be > 0, got {number}")
        elif zero_allowed and number < 0:
            errors.append(f"{option}: must be >= 0, got {number}")
    return errors


def config_errors(config: Any, nonnegative: Iterable[str] = ()) -> list[str]:
    """One `field: reason` line per field of `config` that no run could use."""
    zero_allowed = {*SEED_FIELDS, *nonnegative}
    errors = []
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        errors += value_errors(item.name, value, item.default, item.name in zero_allowed)
    return errors
