"""Char-level transformer language model: the network and its LightningModule."""

from lightning_modules.char_lm.model import CharTransformer
from lightning_modules.char_lm.module import CharLanguageModel

__all__ = ["CharLanguageModel", "CharTransformer"]
