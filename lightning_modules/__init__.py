"""LightningModules: one subpackage per learned system, plus small generic modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from lightning_modules.char_lm import CharLanguageModel
    from lightning_modules.classifier import Classifier
    from lightning_modules.constrained import FairClassifier
    from lightning_modules.equivariant import EquivariantRegressor
    from lightning_modules.fsnet import DC3, FSNet, PenaltyNet, ProjectionNet
    from lightning_modules.hephaestus import Forge, Morph, Refine
    from lightning_modules.kv_lm import LlamaCharLanguageModel
    from lightning_modules.mtlkd import MTLKDStudent, POMOTeacher
    from lightning_modules.nearest_neighbour import NearestNeighbour
    from lightning_modules.neural_es import NeuralES

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
        "lightning_modules.char_lm": ("CharLanguageModel",),
        "lightning_modules.classifier": ("Classifier",),
        "lightning_modules.constrained": ("FairClassifier",),
        "lightning_modules.equivariant": ("EquivariantRegressor",),
        "lightning_modules.fsnet": ("DC3", "FSNet", "PenaltyNet", "ProjectionNet"),
        "lightning_modules.hephaestus": ("Forge", "Morph", "Refine"),
        "lightning_modules.kv_lm": ("LlamaCharLanguageModel",),
        "lightning_modules.mtlkd": ("MTLKDStudent", "POMOTeacher"),
        "lightning_modules.nearest_neighbour": ("NearestNeighbour",),
        "lightning_modules.neural_es": ("NeuralES",),
    },
)
