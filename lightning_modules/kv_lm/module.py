"""Character-level training of the Llama-architecture LM on which KV compression is measured."""

from __future__ import annotations

from pathlib import Path

from optiforge.lightning_modules.char_lm.module import CharLanguageModel
from optiforge.lightning_modules.kv_lm.model import LlamaCharNet
from optiforge.lightning_modules.weights_file import (
    load_into,
    read_weights_file,
    resolve_shipped,
)


def resolve_weights(path: str | Path) -> Path:
    """`path`, or the shipped file a relative `weights/kv_lm/<name>.pt` names
    (`weights_file.resolve_shipped`)."""
    return resolve_shipped(path, "kv_lm")


class LlamaCharLanguageModel(CharLanguageModel):
    """`CharLanguageModel`'s training (next-character cross-entropy, `val/bpc`) on a Llama net.

    Only the network differs: RMSNorm, rotary positions, SwiGLU MLP, as in Llama, so its
    attention cache is what kvpress presses expect.

    Args:
        vocab_size: the data's character vocabulary (65 for tinyshakespeare).
        context_length: longest window (the rotary table's `max_position_embeddings`).
        d_model: hidden size, a multiple of `n_heads`.
        n_heads: attention heads (as many key/value heads: no grouped-query attention).
        n_layers: decoder layers.
        intermediate_size: SwiGLU hidden width.
        weights: a weights file of this model to start from (e.g. the shipped
            `weights/kv_lm/llama_char_tinyshakespeare.pt`); its recorded arguments must equal
            the ones above (checked, one line if not). Not a saved hyperparameter: a file
            exported from the run stands alone.
    """

    def __init__(
        self,
        vocab_size: int = 65,
        context_length: int = 256,
        d_model: int = 128,
        n_heads: int = 4,
        n_layers: int = 4,
        intermediate_size: int = 384,
        weights: str | None = None,
    ) -> None:
        super(CharLanguageModel, self).__init__()
        self.save_hyperparameters(ignore=["weights"])
        self.net = LlamaCharNet(
            vocab_size, context_length, d_model, n_heads, n_layers, intermediate_size
        )
        if weights is not None:
            start = read_weights_file(
                resolve_weights(weights), "model.init_args.weights", expected=LlamaCharLanguageModel
            )
            load_into(start, self, "model.init_args.weights")
