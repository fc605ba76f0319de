"""Char-level transformer language model: the network and its LightningModule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from lightning_modules.char_lm.model import CharTransformer
    from lightning_modules.char_lm.module import CharLanguageModel

__all__ = ["CharLanguageModel", "CharTransformer"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "lightning_modules.char_lm.model": ("CharTransformer",),
        "lightning_modules.char_lm.module": ("CharLanguageModel",),
    },
)
