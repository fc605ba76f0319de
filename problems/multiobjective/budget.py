"""The evaluation counter each method gets instead of the problem: counts, caps, penalises."""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

from optiforge.problems.multiobjective.archive import ParetoArchive
from optiforge.problems.multiobjective.problem import MultiObjectiveProblem

OUT_OF_BOX = ("refuse", "penalty")


class BudgetExhausted(RuntimeError):
    """Raised when a batch would take the evaluation count past the budget."""


class EvaluationBudget:
    """Counts every objective evaluation of `problem`, refuses batches beyond `max_evaluations`,
    and records every evaluated in-box point in a non-dominated archive.

    A method sees only this object (the problem is held in a private slot): its box, dimension
    and number of objectives, `evaluate` and the counts. Out-of-box points are refused
    (`out_of_box="refuse"`) or, as in Neural-ES, evaluated at their projection onto the box plus
    `penalty * (1 + distance to the box)` on every objective (`out_of_box="penalty"`).
    """

    __slots__ = ("__problem", "max_evaluations", "used", "out_of_box", "penalty", "archive")

    def __init__(
        self,
        problem: MultiObjectiveProblem,
        max_evaluations: int | None = None,
        out_of_box: Literal["refuse", "penalty"] = "refuse",
        penalty: float = 1e20,
        archive_size: int = 1000,
    ) -> None:
        if max_evaluations is not None and max_evaluations < 1:
            raise ValueError(f"max_evaluations must be >= 1 or None, got {max_evaluations}")
        if out_of_box not in OUT_OF_BOX:
            raise ValueError(f"out_of_box must be one of {list(OUT_OF_BOX)}, got {out_of_box!r}")
        if not penalty > 0:
            raise ValueError(f"penalty must be > 0, got {penalty}")
        self.__problem = problem
        self.max_evaluations, self.used = max_evaluations, 0
        self.out_of_box, self.penalty = out_of_box, penalty
        self.archive = ParetoArchive(archive_size)

    @property
    def dim(self) -> int:
        return self.__problem.dim

    @property
    def num_obj(self) -> int:
        return self.__problem.num_obj

    def known_ideal(self) -> Tensor:
        """The problem's exact ideal point `[M]` (problem metadata, like the box; not counted)."""
        return self.__problem.known_ideal()

    def bounds(self, like: Tensor) -> tuple[Tensor, Tensor]:
        """The box `(lower, upper)` on `like`'s device and dtype."""
        return self.__problem.bounds(like)

    @property
    def remaining(self) -> int | None:
        """Evaluations left (None: unlimited)."""
        return None if self.max_evaluations is None else self.max_evaluations - self.used

    def evaluate(self, x: Tensor) -> Tensor:
        """`F [n, M]` of `x [n, D]`, counted; raises `BudgetExhausted` (nothing evaluated) when
        `n` exceeds the evaluations left."""
        remaining = self.remaining
        if remaining is not None and len(x) > remaining:
            raise BudgetExhausted(f"{len(x)} evaluations asked, {remaining} left")
        if self.out_of_box == "refuse":
            f = self.__problem.evaluate(x)
        else:
            lower, upper = self.bounds(x)
            inside = torch.minimum(torch.maximum(x, lower), upper)
            f = self.__problem.evaluate(inside)
            gap = (x - inside).norm(dim=1)
            outside = (gap > 0).to(f.dtype)
            f = f + (self.penalty * outside * (1.0 + gap)).unsqueeze(1)
        self.used += len(x)
        valid = ~self.__problem.outside(x)  # a penalised point is no solution: not archived
        self.archive.update(x[valid].detach(), f[valid].detach())
        return f
