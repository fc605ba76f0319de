"""FSNet (feasibility-seeking neural network) and its baselines on parametric constrained
problems: the penalty network, DC3 and exact projection, in one code path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from lightning_modules.fsnet.dc3_module import DC3
    from lightning_modules.fsnet.feasibility import FeasibilityResult, FeasibilitySeeker
    from lightning_modules.fsnet.module import FSNet
    from lightning_modules.fsnet.penalty import PenaltyNet
    from lightning_modules.fsnet.projection import ProjectionNet

__all__ = ["DC3", "FSNet", "FeasibilityResult", "FeasibilitySeeker", "PenaltyNet", "ProjectionNet"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "lightning_modules.fsnet.dc3_module": ("DC3",),
        "lightning_modules.fsnet.feasibility": ("FeasibilityResult", "FeasibilitySeeker"),
        "lightning_modules.fsnet.module": ("FSNet",),
        "lightning_modules.fsnet.penalty": ("PenaltyNet",),
        "lightning_modules.fsnet.projection": ("ProjectionNet",),
    },
)
