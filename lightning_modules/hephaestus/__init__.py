"""Hephaestus for QoSD: Forge (edge-stress GNN + Predictive Path-Stressing), Morph (mixture
of conditional VAEs guided by an energy model) and Refine (latent-space RL agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.hephaestus.forge import Forge
    from optiforge.lightning_modules.hephaestus.morph import Morph
    from optiforge.lightning_modules.hephaestus.predictive_path_stressing import (
        predictive_path_stressing,
    )
    from optiforge.lightning_modules.hephaestus.refine import Refine
    from optiforge.lightning_modules.hephaestus.stress_gnn import EdgeStressGNN

__all__ = ["EdgeStressGNN", "Forge", "Morph", "Refine", "predictive_path_stressing"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.hephaestus.forge": ("Forge",),
        "optiforge.lightning_modules.hephaestus.morph": ("Morph",),
        "optiforge.lightning_modules.hephaestus.predictive_path_stressing": (
            "predictive_path_stressing",
        ),
        "optiforge.lightning_modules.hephaestus.refine": ("Refine",),
        "optiforge.lightning_modules.hephaestus.stress_gnn": ("EdgeStressGNN",),
    },
)
