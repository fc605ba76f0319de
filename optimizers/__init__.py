"""Plain torch optimizers (never import lightning here)."""

from optimizers.lmo import LMO, LMOS, Auto, BiasRMS, ColNorm, RowNorm, Sign, Spectral, make_lmo
from optimizers.nsgd_hess import ClipNSGDHess, NSGDHess
from optimizers.scion import ClippedScion, Scion, UnconstrainedClippedScion, UnconstrainedScion
from optimizers.scion_groups import scion_param_groups

__all__ = [
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
