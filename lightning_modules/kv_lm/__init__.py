"""Llama-architecture character LM (from a `transformers` config) for KV-cache measurements."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.kv_lm.model import LlamaCharNet
    from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel

__all__ = ["LlamaCharLanguageModel", "LlamaCharNet"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.kv_lm.model": ("LlamaCharNet",),
        "optiforge.lightning_modules.kv_lm.module": ("LlamaCharLanguageModel",),
    },
)
