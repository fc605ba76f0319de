"""LightningModules: one subpackage per learned system, plus small generic modules."""

from lightning_modules.char_lm import CharLanguageModel
from lightning_modules.classifier import Classifier

__all__ = ["Classifier", "CharLanguageModel"]
