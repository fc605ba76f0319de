"""A small Llama-architecture causal LM built from a `transformers` config (no downloads).

It is the model the KV-cache compression methods are measured on: real rotary queries, keys and
values of a trained transformer, with the `transformers` cache that kvpress presses act on.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from optiforge.lightning_modules.transformer_sizes import check_transformer_sizes


def llama_config(
    vocab_size: int,
    context_length: int,
    d_model: int,
    n_heads: int,
    n_layers: int,
    intermediate_size: int,
) -> LlamaConfig:
    """The `LlamaConfig` of a character-level model (no tied embeddings, eager-friendly)."""
    check_transformer_sizes(
        d_model,
        n_heads,
        vocab_size=vocab_size,
        context_length=context_length,
        n_layers=n_layers,
        intermediate_size=intermediate_size,
    )
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=d_model,
        intermediate_size=intermediate_size,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        num_key_value_heads=n_heads,
        max_position_embeddings=context_length,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )


class LlamaCharNet(nn.Module):
    """`LlamaForCausalLM` on character ids: `forward(ids [B, T]) -> logits [B, T, vocab]`.

    Args: as `llama_config`; `attn_implementation` is "sdpa" for training, "eager" where the
    attention weights are read.
    """

    def __init__(
        self,
        vocab_size: int,
        context_length: int,
        d_model: int,
        n_heads: int,
        n_layers: int,
        intermediate_size: int,
        attn_implementation: str = "sdpa",
    ) -> None:
        super().__init__()
        config = llama_config(
            vocab_size, context_length, d_model, n_heads, n_layers, intermediate_size
        )
        config._attn_implementation = attn_implementation
        self.llama = LlamaForCausalLM(config)

    def forward(self, ids: Tensor) -> Tensor:
        return self.llama(input_ids=ids, use_cache=False).logits

    @torch.no_grad()
    def attention_inputs(self, ids: Tensor) -> list[tuple[Tensor, Tensor, Tensor]]:
        """Per layer, the rotated queries and keys and the values [B, heads, T, head_dim] that
        its attention sees on ids [B, T] (read by forward hooks, recomputed as Llama does)."""
        captured: list[tuple[Tensor, tuple[Tensor, Tensor]]] = []

        def hook(module: nn.Module, args: tuple, kwargs: dict) -> None:
            captured.append((kwargs["hidden_states"], kwargs["position_embeddings"]))

        layers = self.llama.model.layers
        handles = [
            layer.self_attn.register_forward_pre_hook(hook, with_kwargs=True) for layer in layers
        ]
        try:
            self.llama(input_ids=ids, use_cache=False)
        finally:
            for handle in handles:
                handle.remove()
        inputs = []
        for layer, (hidden, (cos, sin)) in zip(layers, captured, strict=True):
            attention = layer.self_attn
            shape = (*hidden.shape[:-1], -1, attention.head_dim)
            query, key, value = (
                projection(hidden).view(shape).transpose(1, 2)
                for projection in (attention.q_proj, attention.k_proj, attention.v_proj)
            )
            query, key = apply_rotary_pos_emb(query, key, cos, sin)
            inputs.append((query, key, value))
        return inputs
