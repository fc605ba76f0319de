"""The shipped Llama-architecture char LM with the data it was trained on, as the KV-cache
benchmarks measure it (here, not in lightning_modules: a LightningModule package never imports
a datamodule)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import LlamaForCausalLM

from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
from optiforge.lightning_modules.kv_lm.weights import SHIPPED, load_weights


def llama_and_data(
    path: str | Path = SHIPPED,
) -> tuple[LlamaForCausalLM, dict[str, Any], TinyShakespeareDataModule]:
    """The weights' `LlamaForCausalLM` (eval mode), the file's metadata, and the set-up
    tinyshakespeare datamodule at the model's context length (what the benchmarks measure on)."""
    module, card = load_weights(path)
    data = TinyShakespeareDataModule(context_length=module.hparams.context_length)
    data.setup()
    return module.net.llama, card, data
