"""LightningModules: one subpackage per learned system, plus small generic modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.char_lm import CharLanguageModel
    from optiforge.lightning_modules.classifier import Classifier
    from optiforge.lightning_modules.constrained import FairClassifier
    from optiforge.lightning_modules.equivariant import EquivariantRegressor
    from optiforge.lightning_modules.fsnet import DC3, FSNet, PenaltyNet, ProjectionNet
    from optiforge.lightning_modules.hephaestus import Forge, Morph, Refine
    from optiforge.lightning_modules.kv_lm import LlamaCharLanguageModel
    from optiforge.lightning_modules.mtlkd import MTLKDStudent, POMOTeacher
    from optiforge.lightning_modules.nearest_neighbour import NearestNeighbour
    from optiforge.lightning_modules.neural_es import NeuralES

__all__ = [
    "DC3",
    "Classifier",
    "CharLanguageModel",
    "EquivariantRegressor",
    "FSNet",
    "FairClassifier",
    "Forge",
    "LlamaCharLanguageModel",
    "MTLKDStudent",
    "Morph",
    "NearestNeighbour",
    "NeuralES",
    "POMOTeacher",
    "PenaltyNet",
    "ProjectionNet",
    "Refine",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.char_lm": ("CharLanguageModel",),
        "optiforge.lightning_modules.classifier": ("Classifier",),
        "optiforge.lightning_modules.constrained": ("FairClassifier",),
        "optiforge.lightning_modules.equivariant": ("EquivariantRegressor",),
        "optiforge.lightning_modules.fsnet": ("DC3", "FSNet", "PenaltyNet", "ProjectionNet"),
        "optiforge.lightning_modules.hephaestus": ("Forge", "Morph", "Refine"),
        "optiforge.lightning_modules.kv_lm": ("LlamaCharLanguageModel",),
        "optiforge.lightning_modules.mtlkd": ("MTLKDStudent", "POMOTeacher"),
        "optiforge.lightning_modules.nearest_neighbour": ("NearestNeighbour",),
        "optiforge.lightning_modules.neural_es": ("NeuralES",),
    },
)
