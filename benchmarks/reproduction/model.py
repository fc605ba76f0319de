"""A paper claim, the numbers measured for it, and the rule that turns them into a verdict."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from optiforge.benchmarks.reproduction.select import Across, Getter

RESULTS = Path(__file__).resolve().parents[1] / "results"


class Verdict(str, Enum):
    """Whether a claim reproduces here."""

    REPRODUCES = "reproduces"
    PARTLY = "partly"
    NOT = "not"
    NOT_JUDGED = "not judged"
    NO_RESULT = "no published result"  # no paper result to judge against (the testbeds)


@dataclass(frozen=True)
class Number:
    """One measured number: what it is, where in the result it is, how the README writes it.

    `readme`: the formatted number appears verbatim in the README's headline cell of the
    claim's system (a test compares them). `result`: read from this result instead of the
    claim's own. `across`: read from these results together (a range over several runs);
    `value` then gets the list of them, in this order.
    """

    what: str
    value: Getter | Across
    fmt: str
    readme: bool = True
    result: str | None = None
    across: tuple[str, ...] = ()

    def read(self, results: dict[str, dict[str, Any]], default: str) -> float:
        """The number, read from its result (or results)."""
        if self.across:
            return self.value([results[name] for name in self.across])  # type: ignore[arg-type]
        return self.value(results[self.result or default])  # type: ignore[arg-type]

    def text(self, value: float) -> str:
        """The number formatted as the docs write it (exponents without leading zeros)."""
        return re.sub(
            r"e([-+])0*(\d)", lambda m: f"e{m[1].replace('+', '')}{m[2]}", format(value, self.fmt)
        )


@dataclass(frozen=True)
class Better:
    """Numbers[ours] beats every numbers[peer]: reproduces; within `partly` (relative) of the
    best peer: partly; else not."""

    ours: int
    peers: tuple[int, ...]
    lower: bool = True
    partly: float = 0.05

    def verdict(self, values: Sequence[float]) -> Verdict:
        """The verdict for the measured values."""
        sign = 1.0 if self.lower else -1.0
        ours = sign * values[self.ours]
        best = min(sign * values[peer] for peer in self.peers)
        if ours < best:
            return Verdict.REPRODUCES
        return Verdict.PARTLY if ours <= best + self.partly * abs(best) else Verdict.NOT

    def text(self, numbers: Sequence[Number]) -> str:
        """The rule in words."""
        word = "below" if self.lower else "above"
        peers = " and ".join(numbers[peer].what for peer in self.peers)
        return (
            f"reproduces if {numbers[self.ours].what} is {word} {peers}; partly if within "
            f"{self.partly:.0%} of it; else not"
        )


@dataclass(frozen=True)
class Threshold:
    """Numbers[index] at or below (`lower`) / above a bound: reproduces; within the `partly`
    bound: partly; else not."""

    index: int
    bound: float
    partly: float | None = None
    lower: bool = True

    def verdict(self, values: Sequence[float]) -> Verdict:
        """The verdict for the measured values."""
        value = values[self.index]
        meets = (lambda b: value <= b) if self.lower else (lambda b: value >= b)
        if meets(self.bound):
            return Verdict.REPRODUCES
        return Verdict.PARTLY if self.partly is not None and meets(self.partly) else Verdict.NOT

    def text(self, numbers: Sequence[Number]) -> str:
        """The rule in words."""
        op = "<=" if self.lower else ">="
        partly = f"; partly if {op} {self.partly:g}" if self.partly is not None else ""
        return f"reproduces if {numbers[self.index].what} {op} {self.bound:g}{partly}; else not"


@dataclass(frozen=True)
class Every:
    """Several rules: all reproduce: reproduces; some reproduce or partly: partly; else not."""

    rules: tuple[Better | Threshold, ...]

    def verdict(self, values: Sequence[float]) -> Verdict:
        """The verdict for the measured values."""
        verdicts = [rule.verdict(values) for rule in self.rules]
        if all(v is Verdict.REPRODUCES for v in verdicts):
            return Verdict.REPRODUCES
        return Verdict.NOT if all(v is Verdict.NOT for v in verdicts) else Verdict.PARTLY

    def text(self, numbers: Sequence[Number]) -> str:
        """The rule in words."""
        parts = "; ".join(rule.text(numbers).split(";")[0] for rule in self.rules)
        return f"all of: {parts} (reproduces if all hold, partly if some do)"


Rule = Better | Threshold | Every


@dataclass(frozen=True)
class Claim:
    """A paper's claim and how this project measures it.

    system: the docs page (docs/<system>.md) and README row; result: the name of the published
    result (benchmarks/results/<result>.json) the numbers are read from; published: False where
    no paper publishes a result to judge the numbers against (the project's own testbeds).
    """

    system: str
    paper: str
    claim: str
    metric: str
    result: str
    numbers: tuple[Number, ...] = ()
    rule: Rule | None = None
    published: bool = True

    def files(self) -> list[str]:
        """The names of the results the numbers are read from, the claim's own first."""
        names = [self.result]
        for number in self.numbers:
            names += [number.result, *number.across]
        return list(dict.fromkeys(name for name in names if name is not None))

    def values(self) -> list[float]:
        """The measured numbers, read from the published results."""
        results = {name: load(name) for name in self.files()}
        return [number.read(results, self.result) for number in self.numbers]

    def verdict(self) -> Verdict:
        """The verdict derived from the result's numbers by the claim's rule."""
        if not self.published:
            return Verdict.NO_RESULT
        if self.rule is None:
            return Verdict.NOT_JUDGED
        return self.rule.verdict(self.values())


def load(name: str) -> dict[str, Any]:
    """A published result, benchmarks/results/<name>.json."""
    return json.loads((RESULTS / f"{name}.json").read_text())
