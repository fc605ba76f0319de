"""Argument checks shared by the optimizers: each error names the field and the allowed values."""

from __future__ import annotations

from collections.abc import Collection


def require_non_negative(field: str, value: float) -> None:
    """Raise `ValueError` unless `value >= 0`."""
    if not value >= 0:
        raise ValueError(f"{field} must be >= 0, got {value}")


def require_positive(field: str, value: float) -> None:
    """Raise `ValueError` unless `value > 0`."""
    if not value > 0:
        raise ValueError(f"{field} must be > 0, got {value}")


def require_in_range(
    field: str,
    value: float,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise `ValueError` unless `value` lies in the interval from `low` to `high`."""
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    if not (above and below):
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{field} must be in {interval}, got {value}")


def require_choice(field: str, value: str, choices: Collection[str]) -> None:
    """Raise `ValueError` unless `value` is one of `choices`."""
    if value not in choices:
        raise ValueError(f"{field} must be one of {sorted(choices)}, got {value!r}")
