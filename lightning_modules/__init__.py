"""LightningModules: one subpackage per learned system, plus small generic modules."""

from lightning_modules.char_lm import CharLanguageModel
from lightning_modules.classifier import Classifier
from lightning_modules.constrained import FairClassifier
from lightning_modules.equivariant import EquivariantRegressor
from lightning_modules.fsnet import DC3, FSNet, PenaltyNet, ProjectionNet
from lightning_modules.hephaestus import Forge, Morph, Refine
from lightning_modules.mtlkd import MTLKDStudent, POMOTeacher

__all__ = [
    "DC3",
    "Classifier",
    "CharLanguageModel",
    "EquivariantRegressor",
    "FSNet",
    "FairClassifier",
    "Forge",
    "MTLKDStudent",
    "Morph",
    "POMOTeacher",
    "PenaltyNet",
    "ProjectionNet",
    "Refine",
]
