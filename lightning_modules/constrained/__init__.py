"""Equality-constrained learning (Barthakur & Chamon): `LagrangianMixin` for any LightningModule,
and its experiments: fairness, PINN, interpolation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.constrained.convection_pinn import ConvectionPINN
    from optiforge.lightning_modules.constrained.fair_classifier import FairClassifier
    from optiforge.lightning_modules.constrained.interpolating_classifier import (
        InterpolatingClassifier,
    )
    from optiforge.lightning_modules.constrained.lagrangian import LagrangianMixin

__all__ = ["ConvectionPINN", "FairClassifier", "InterpolatingClassifier", "LagrangianMixin"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.constrained.convection_pinn": ("ConvectionPINN",),
        "optiforge.lightning_modules.constrained.fair_classifier": ("FairClassifier",),
        "optiforge.lightning_modules.constrained.interpolating_classifier": (
            "InterpolatingClassifier",
        ),
        "optiforge.lightning_modules.constrained.lagrangian": ("LagrangianMixin",),
    },
)
