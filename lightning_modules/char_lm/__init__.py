"""Char-level transformer language model: the network and its LightningModule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.char_lm.model import CharTransformer
    from optiforge.lightning_modules.char_lm.module import CharLanguageModel

__all__ = ["CharLanguageModel", "CharTransformer"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.char_lm.model": ("CharTransformer",),
        "optiforge.lightning_modules.char_lm.module": ("CharLanguageModel",),
    },
)
