"""Plain torch optimizers (never import lightning here)."""

from optimizers.constraint_residual import ConstraintResidual, equality, inequality
from optimizers.dual_ascent import DualAscent
from optimizers.lmo import LMO, LMOS, Auto, BiasRMS, ColNorm, RowNorm, Sign, Spectral, make_lmo
from optimizers.msam import MSAM
from optimizers.nsam import NSAM
from optimizers.nsgd_hess import ClipNSGDHess, NSGDHess
from optimizers.rwsam import RWSAM
from optimizers.sam import SAM
from optimizers.scion import ClippedScion, Scion, UnconstrainedClippedScion, UnconstrainedScion
from optimizers.scion_groups import scion_param_groups
from optimizers.sharpness_pass import SharpnessPass, sharpness_pass

__all__ = [
    "ConstraintResidual",
    "DualAscent",
    "equality",
    "inequality",
    "MSAM",
    "NSAM",
    "RWSAM",
    "SAM",
    "SharpnessPass",
    "sharpness_pass",
    "LMO",
    "LMOS",
    "Auto",
    "BiasRMS",
    "ClippedScion",
    "ColNorm",
    "RowNorm",
    "Scion",
    "Sign",
    "Spectral",
    "UnconstrainedClippedScion",
    "UnconstrainedScion",
    "make_lmo",
    "scion_param_groups",
    "ClipNSGDHess",
    "NSGDHess",
]
