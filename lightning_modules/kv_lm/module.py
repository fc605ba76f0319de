"""Character-level training of the Llama-architecture LM on which KV compression is measured."""

from __future__ import annotations

from optiforge.lightning_modules.char_lm.module import CharLanguageModel
from optiforge.lightning_modules.kv_lm.model import LlamaCharNet


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
    """

    def __init__(
        self,
        vocab_size: int = 65,
        context_length: int = 256,
        d_model: int = 128,
        n_heads: int = 4,
        n_layers: int = 4,
        intermediate_size: int = 384,
    ) -> None:
        super(CharLanguageModel, self).__init__()
        self.save_hyperparameters()
        self.net = LlamaCharNet(
            vocab_size, context_length, d_model, n_heads, n_layers, intermediate_size
        )
