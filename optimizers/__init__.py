"""Plain torch optimizers (never import lightning here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optimizers.bayes_curvature import BayesCurvature
    from optimizers.constraint_residual import ConstraintResidual, equality, inequality
    from optimizers.dual_ascent import DualAscent
    from optimizers.hessian_reuse_agd import HessianReuseAGD, hessian_reuse_agd
    from optimizers.lmo import LMO, LMOS, Auto, BiasRMS, ColNorm, RowNorm, Sign, Spectral, make_lmo
    from optimizers.msam import MSAM
    from optimizers.nsam import NSAM
    from optimizers.nsgd_hess import ClipNSGDHess, NSGDHess
    from optimizers.rwsam import RWSAM
    from optimizers.sam import SAM
    from optimizers.scion import ClippedScion, Scion, UnconstrainedClippedScion, UnconstrainedScion
    from optimizers.scion_groups import scion_param_groups
    from optimizers.sharpness_pass import SharpnessPass, sharpness_pass
    from optimizers.zeroth_order import MeZO, TelescopingZO

__all__ = [
    "BayesCurvature",
    "ConstraintResidual",
    "DualAscent",
    "HessianReuseAGD",
    "hessian_reuse_agd",
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
    "MeZO",
    "TelescopingZO",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optimizers.bayes_curvature": ("BayesCurvature",),
        "optimizers.constraint_residual": ("ConstraintResidual", "equality", "inequality"),
        "optimizers.dual_ascent": ("DualAscent",),
        "optimizers.hessian_reuse_agd": ("HessianReuseAGD", "hessian_reuse_agd"),
        "optimizers.lmo": (
            "LMO",
            "LMOS",
            "Auto",
            "BiasRMS",
            "ColNorm",
            "RowNorm",
            "Sign",
            "Spectral",
            "make_lmo",
        ),
        "optimizers.msam": ("MSAM",),
        "optimizers.nsam": ("NSAM",),
        "optimizers.nsgd_hess": ("ClipNSGDHess", "NSGDHess"),
        "optimizers.rwsam": ("RWSAM",),
        "optimizers.sam": ("SAM",),
        "optimizers.scion": (
            "ClippedScion",
            "Scion",
            "UnconstrainedClippedScion",
            "UnconstrainedScion",
        ),
        "optimizers.scion_groups": ("scion_param_groups",),
        "optimizers.sharpness_pass": ("SharpnessPass", "sharpness_pass"),
        "optimizers.zeroth_order": ("MeZO", "TelescopingZO"),
    },
)
