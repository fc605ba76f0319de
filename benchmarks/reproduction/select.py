"""Reading one number out of a published result (benchmarks/results/<name>.json).

Each helper returns a function of the loaded result, so the claims registry says where a
number comes from and the number itself is always read from the file.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Result = Mapping[str, Any]
Getter = Callable[[Result], float]
Across = Callable[[Sequence[Result]], float]


def get(result: Any, *path: str | int) -> Any:
    """The value at a path of keys and list indices."""
    for key in path:
        result = result[key]
    return result


def at(*path: str | int) -> Getter:
    """The number at a path of keys."""
    return lambda result: float(get(result, *path))


def rows(result: Result, path: Sequence[str | int], **match: Any) -> list[Mapping[str, Any]]:
    """The entries of the list at `path` whose fields equal `match`; at least one."""
    found = [row for row in get(result, *path) if all(row.get(k) == v for k, v in match.items())]
    if not found:
        raise KeyError(f"no entry of {'.'.join(map(str, path))} with {match}")
    return found


def field(path: Sequence[str | int], name: str, **match: Any) -> Getter:
    """The field `name` of the one entry of the list at `path` that matches."""
    return lambda result: float(rows(result, path, **match)[0][name])


def over(
    reduce: Callable[[list[float]], float], path: Sequence[str | int], name: str, **match: Any
) -> Getter:
    """`reduce` (mean, min, max, ...) of field `name` over the matching entries of a list."""
    return lambda result: float(reduce([float(row[name]) for row in rows(result, path, **match)]))


def mean(values: list[float]) -> float:
    """Arithmetic mean."""
    return statistics.fmean(values)


def scaled(getter: Getter, factor: float) -> Getter:
    """A number times a constant (a fraction as a percentage)."""
    return lambda result: factor * getter(result)


def ratio(numerator: Getter, denominator: Getter) -> Getter:
    """One number over another, both from the same result."""
    return lambda result: numerator(result) / denominator(result)


def across(
    reduce: Callable[[list[float]], float], values: Callable[[Result], list[float]]
) -> Across:
    """`reduce` (min, max) of the numbers `values` reads from each of several results, pooled."""
    return lambda results: float(reduce([value for result in results for value in values(result)]))
