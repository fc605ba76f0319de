"""Named constraint residuals: what a model returns next to its loss for constrained learning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

ConstraintKind = Literal["equality", "inequality"]
CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = ("equality", "inequality")


@dataclass(frozen=True)
class ConstraintResidual:
    """One constraint's residual on the current batch: a scalar or a vector of constraints.

    Equality constraints ask `value == 0` elementwise; inequality constraints ask `value <= 0`
    elementwise. `value` must be differentiable in the model parameters, otherwise the primal
    step could not act on it.
    """

    value: torch.Tensor
    kind: ConstraintKind

    def __post_init__(self) -> None:
        if self.kind not in CONSTRAINT_KINDS:
            raise ValueError(
                f"constraint kind must be one of {CONSTRAINT_KINDS}, got {self.kind!r}"
            )
        if not isinstance(self.value, torch.Tensor):
            raise TypeError(f"constraint value must be a torch.Tensor, got {type(self.value)}")


def equality(value: torch.Tensor) -> ConstraintResidual:
    """Residual `h` of the equality constraint(s) `h == 0`."""
    return ConstraintResidual(value, "equality")


def inequality(value: torch.Tensor) -> ConstraintResidual:
    """Residual `g` of the inequality constraint(s) `g <= 0`."""
    return ConstraintResidual(value, "inequality")
