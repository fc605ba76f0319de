"""FSNet (feasibility-seeking neural network) and its baselines on parametric constrained
problems: the penalty network, DC3 and exact projection, in one code path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.fsnet.dc3_module import DC3
    from optiforge.lightning_modules.fsnet.feasibility import FeasibilityResult, FeasibilitySeeker
    from optiforge.lightning_modules.fsnet.module import FSNet
    from optiforge.lightning_modules.fsnet.penalty import PenaltyNet
    from optiforge.lightning_modules.fsnet.projection import ProjectionNet

__all__ = ["DC3", "FSNet", "FeasibilityResult", "FeasibilitySeeker", "PenaltyNet", "ProjectionNet"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.fsnet.dc3_module": ("DC3",),
        "optiforge.lightning_modules.fsnet.feasibility": ("FeasibilityResult", "FeasibilitySeeker"),
        "optiforge.lightning_modules.fsnet.module": ("FSNet",),
        "optiforge.lightning_modules.fsnet.penalty": ("PenaltyNet",),
        "optiforge.lightning_modules.fsnet.projection": ("ProjectionNet",),
    },
)
