"""Vehicle routing problems: the 16 variants, instances, generator, environment, validator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.problems.vrp.augment import augment_8
    from optiforge.problems.vrp.cvrplib import BenchmarkInstance, gap_to_bks
    from optiforge.problems.vrp.env import VRPState, random_feasible_rollout
    from optiforge.problems.vrp.generator import generate, vehicle_capacity
    from optiforge.problems.vrp.instance import VRPBatch
    from optiforge.problems.vrp.pyvrp_solver import PyVRPSolution, PyVRPSolver
    from optiforge.problems.vrp.validator import InfeasibleSolution, validate, validate_batch
    from optiforge.problems.vrp.variants import (
        ALL_VARIANTS,
        SEEN_VARIANTS,
        UNSEEN_VARIANTS,
        Variant,
        variant,
    )

__all__ = ["ALL_VARIANTS", "SEEN_VARIANTS", "UNSEEN_VARIANTS", "VRPBatch", "Variant", "variant"]
__all__ += ["BenchmarkInstance", "PyVRPSolution", "PyVRPSolver", "gap_to_bks"]
__all__ += ["InfeasibleSolution", "VRPState", "augment_8", "generate", "random_feasible_rollout"]
__all__ += ["validate", "validate_batch", "vehicle_capacity"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.problems.vrp.augment": ("augment_8",),
        "optiforge.problems.vrp.cvrplib": ("BenchmarkInstance", "gap_to_bks"),
        "optiforge.problems.vrp.env": ("VRPState", "random_feasible_rollout"),
        "optiforge.problems.vrp.generator": ("generate", "vehicle_capacity"),
        "optiforge.problems.vrp.instance": ("VRPBatch",),
        "optiforge.problems.vrp.pyvrp_solver": ("PyVRPSolution", "PyVRPSolver"),
        "optiforge.problems.vrp.validator": ("InfeasibleSolution", "validate", "validate_batch"),
        "optiforge.problems.vrp.variants": (
            "ALL_VARIANTS",
            "SEEN_VARIANTS",
            "UNSEEN_VARIANTS",
            "Variant",
            "variant",
        ),
    },
)
