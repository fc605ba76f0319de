"""Named families and `make_family`, the checked entry point that builds one from a seed.

Names: "{convex,nonconvex,nonsmooth}_{qp,qcqp,socp}" (FSNet's nine; the nonconvex and nonsmooth
ones use sine constraints, see `family.py`) and "dc3_convex_qp", "dc3_nonconvex_qp" (DC3's
recipe, linear constraints in both, as in DC3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from optiforge.problems.constrained.family import OBJECTIVE_KINDS, ConstrainedFamily
from optiforge.problems.constrained.linear import LinearInequalityFamily
from optiforge.problems.constrained.quadratic import QuadraticInequalityFamily
from optiforge.problems.constrained.second_order_cone import SecondOrderConeFamily

DEFAULT_SEED = 2025
FamilyConstructor = Callable[..., ConstrainedFamily]

_FSNET_CONSTRAINTS: dict[str, FamilyConstructor] = {
    "qp": partial(LinearInequalityFamily.generate, recipe="fsnet"),
    "qcqp": QuadraticInequalityFamily.generate,
    "socp": SecondOrderConeFamily.generate,
}

FAMILIES: dict[str, FamilyConstructor] = {
    f"{objective}_{constraint}": partial(
        generate,
        f"{objective}_{constraint}",
        objective_kind=objective,
        sine_constraints=objective != "convex",
    )
    for objective in OBJECTIVE_KINDS
    for constraint, generate in _FSNET_CONSTRAINTS.items()
} | {
    f"dc3_{objective}_qp": partial(
        LinearInequalityFamily.generate,
        f"dc3_{objective}_qp",
        objective_kind=objective,
        sine_constraints=False,
        recipe="dc3",
    )
    for objective in ("convex", "nonconvex")
}


def _check_count(field: str, value: object) -> None:
    """`value` must be a positive int (bools are not counts)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{field} must be a positive integer, got {value!r}")


def make_family(
    name: str,
    num_vars: int = 100,
    num_eq: int = 50,
    num_ineq: int = 50,
    seed: int = DEFAULT_SEED,
) -> ConstrainedFamily:
    """The family `name` with the given sizes, drawn from `seed` (same seed, same bits)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown family {name!r}; allowed: {', '.join(sorted(FAMILIES))}")
    for field, value in (("num_vars", num_vars), ("num_eq", num_eq), ("num_ineq", num_ineq)):
        _check_count(field, value)
    if num_eq >= num_vars:
        raise ValueError(
            f"num_eq must be smaller than num_vars (= {num_vars}) so that A y = x leaves "
            f"free directions, got {num_eq}"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return FAMILIES[name](num_vars=num_vars, num_eq=num_eq, num_ineq=num_ineq, seed=seed)


@dataclass(frozen=True)
class ProblemSpec:
    """Which family to draw: name, sizes and seed (a config block shared by model and data).

    FSNet's default: 100 variables, 50 equalities, 50 inequalities, seed 2025.
    """

    name: str = "convex_qp"
    num_vars: int = 100
    num_eq: int = 50
    num_ineq: int = 50
    seed: int = DEFAULT_SEED

    def build(self) -> ConstrainedFamily:
        """The family this spec names (`make_family` checks every field)."""
        return make_family(self.name, self.num_vars, self.num_eq, self.num_ineq, self.seed)


DEFAULT_PROBLEM = ProblemSpec()
