"""Vehicle routing problems: the 16 variants, instances, generator, environment, validator."""

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
