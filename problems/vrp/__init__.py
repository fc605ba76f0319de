"""Vehicle routing problems: the 16 variants, instances, generator, environment, validator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from problems.vrp.augment import augment_8
    from problems.vrp.cvrplib import BenchmarkInstance, gap_to_bks
    from problems.vrp.env import VRPState, random_feasible_rollout
    from problems.vrp.generator import generate, vehicle_capacity
    from problems.vrp.instance import VRPBatch
    from problems.vrp.pyvrp_solver import PyVRPSolution, PyVRPSolver
    from problems.vrp.validator import InfeasibleSolution, validate, validate_batch
    from problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS, UNSEEN_VARIANTS, Variant, variant

__all__ = ["ALL_VARIANTS", "SEEN_VARIANTS", "UNSEEN_VARIANTS", "VRPBatch", "Variant", "variant"]
__all__ += ["BenchmarkInstance", "PyVRPSolution", "PyVRPSolver", "gap_to_bks"]
__all__ += ["InfeasibleSolution", "VRPState", "augment_8", "generate", "random_feasible_rollout"]
__all__ += ["validate", "validate_batch", "vehicle_capacity"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "problems.vrp.augment": ("augment_8",),
        "problems.vrp.cvrplib": ("BenchmarkInstance", "gap_to_bks"),
        "problems.vrp.env": ("VRPState", "random_feasible_rollout"),
        "problems.vrp.generator": ("generate", "vehicle_capacity"),
        "problems.vrp.instance": ("VRPBatch",),
        "problems.vrp.pyvrp_solver": ("PyVRPSolution", "PyVRPSolver"),
        "problems.vrp.validator": ("InfeasibleSolution", "validate", "validate_batch"),
        "problems.vrp.variants": (
            "ALL_VARIANTS",
            "SEEN_VARIANTS",
            "UNSEEN_VARIANTS",
            "Variant",
            "variant",
        ),
    },
)
