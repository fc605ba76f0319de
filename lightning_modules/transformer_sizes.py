"""The size check shared by the project's transformer language models (char_lm, kv_lm)."""

from __future__ import annotations


def check_transformer_sizes(d_model: int, n_heads: int, **sizes: int) -> None:
    """Every size >= 1 and d_model a multiple of n_heads; errors name the `model.` field."""
    for name, value in {"d_model": d_model, "n_heads": n_heads, **sizes}.items():
        if value < 1:
            raise ValueError(f"model.{name} must be >= 1, got {value}")
    if d_model % n_heads:
        raise ValueError(f"model.d_model={d_model} must be a multiple of model.n_heads={n_heads}")
