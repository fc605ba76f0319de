"""Plain torch optimizers (never import lightning here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.optimizers.bayes_curvature import BayesCurvature
    from optiforge.optimizers.constraint_residual import ConstraintResidual, equality, inequality
    from optiforge.optimizers.contract import LoopHooks, LoopNeeds, loop_needs, wants_graph
    from optiforge.optimizers.dual_ascent import DualAscent
    from optiforge.optimizers.hessian_reuse_agd import HessianReuseAGD, hessian_reuse_agd
    from optiforge.optimizers.lmo import (
        LMO,
        LMOS,
        Auto,
        BiasRMS,
        ColNorm,
        RowNorm,
        Sign,
        Spectral,
        make_lmo,
    )
    from optiforge.optimizers.msam import MSAM
    from optiforge.optimizers.nsam import NSAM
    from optiforge.optimizers.nsgd_hess import ClipNSGDHess, NSGDHess
    from optiforge.optimizers.registry import available, create, needs
    from optiforge.optimizers.rwsam import RWSAM
    from optiforge.optimizers.sam import SAM
    from optiforge.optimizers.scion import (
        ClippedScion,
        Scion,
        UnconstrainedClippedScion,
        UnconstrainedScion,
    )
    from optiforge.optimizers.scion_groups import scion_param_groups
    from optiforge.optimizers.sharpness_pass import SharpnessPass, sharpness_pass
    from optiforge.optimizers.zeroth_order import MeZO, TelescopingZO

__all__ = [
    "LoopHooks",
    "LoopNeeds",
    "available",
    "create",
    "loop_needs",
    "needs",
    "wants_graph",
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
        "optiforge.optimizers.bayes_curvature": ("BayesCurvature",),
        "optiforge.optimizers.constraint_residual": (
            "ConstraintResidual",
            "equality",
            "inequality",
        ),
        "optiforge.optimizers.contract": ("LoopHooks", "LoopNeeds", "loop_needs", "wants_graph"),
        "optiforge.optimizers.dual_ascent": ("DualAscent",),
        "optiforge.optimizers.hessian_reuse_agd": ("HessianReuseAGD", "hessian_reuse_agd"),
        "optiforge.optimizers.lmo": (
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
        "optiforge.optimizers.msam": ("MSAM",),
        "optiforge.optimizers.nsam": ("NSAM",),
        "optiforge.optimizers.nsgd_hess": ("ClipNSGDHess", "NSGDHess"),
        "optiforge.optimizers.registry": ("available", "create", "needs"),
        "optiforge.optimizers.rwsam": ("RWSAM",),
        "optiforge.optimizers.sam": ("SAM",),
        "optiforge.optimizers.scion": (
            "ClippedScion",
            "Scion",
            "UnconstrainedClippedScion",
            "UnconstrainedScion",
        ),
        "optiforge.optimizers.scion_groups": ("scion_param_groups",),
        "optiforge.optimizers.sharpness_pass": ("SharpnessPass", "sharpness_pass"),
        "optiforge.optimizers.zeroth_order": ("MeZO", "TelescopingZO"),
    },
)
