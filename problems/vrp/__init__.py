"""Vehicle routing problems: the 16 variants, instances, generator, environment, validator."""

from problems.vrp.cvrplib import BenchmarkInstance, gap_to_bks
from problems.vrp.instance import VRPBatch
from problems.vrp.pyvrp_solver import PyVRPSolution, PyVRPSolver
from problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS, UNSEEN_VARIANTS, Variant, variant

__all__ = ["ALL_VARIANTS", "SEEN_VARIANTS", "UNSEEN_VARIANTS", "VRPBatch", "Variant", "variant"]
__all__ += ["BenchmarkInstance", "PyVRPSolution", "PyVRPSolver", "gap_to_bks"]
