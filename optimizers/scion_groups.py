"""Parameter groups for the Scion family by layer role: input, hidden, output head, vectors.

Scion's geometry is chosen per layer (Pethick et al. 2025). The reference notes' choices are
  image models (CNN, ViT):  input Spectral -> hidden Spectral -> output Sign  (the defaults here)
  language models:          input Sign     -> hidden Spectral -> output Sign
                            (`scion_param_groups(model, input_norm="Sign")`)
with biases and normalization gains in the RMS ball (`BiasRMS`). The configurations in
docs/optimizers.md use e.g. hidden scale 8 / output scale 128 for a CNN and hidden 50 / head
3000 for nanoGPT; the scales are radii, so they matter most for the constrained variants.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from optiforge.optimizers.lmo import make_lmo
from optiforge.optimizers.validation import require_positive

LAYER_TYPES = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Embedding)
TRANSPOSABLE_NORMS = ("colnorm", "rownorm")


def scion_param_groups(
    model: nn.Module,
    input_norm: str = "Spectral",
    hidden_norm: str = "Spectral",
    output_norm: str = "Sign",
    vector_norm: str = "BiasRMS",
    input_scale: float = 1.0,
    hidden_scale: float = 1.0,
    output_scale: float = 1.0,
    vector_scale: float = 1.0,
) -> list[dict[str, Any]]:
    """Split the trainable parameters of `model` into up to four named Scion param groups.

    Roles, decided on the weights of Linear / Conv1-3d / Embedding layers in `model.modules()`
    order: every Embedding (or, without embeddings, the first layer) is "input"; the last Linear
    is "output" (it wins if it is also the first layer); every other tensor with >= 2 dims is
    "hidden"; every 0-D/1-D tensor (biases, norm gains) is "vector". An Embedding table
    [vocab, dim] with ColNorm/RowNorm gets `transpose=True` (its rows are the map's columns).
    A tensor shared by several layers (tied weights) is placed once, in its first role found in
    the order output, input, hidden. Empty groups are left out.

    Returns:
        param groups `{"name", "params", "norm", "norm_kwargs", "scale"}` for any Scion optimizer.
    """
    for field, value in (
        ("input_scale", input_scale),
        ("hidden_scale", hidden_scale),
        ("output_scale", output_scale),
        ("vector_scale", vector_scale),
    ):
        require_positive(field, value)
    for field, name in (
        ("input_norm", input_norm),
        ("hidden_norm", hidden_norm),
        ("output_norm", output_norm),
        ("vector_norm", vector_norm),
    ):
        try:
            make_lmo(name)
        except ValueError as error:
            raise ValueError(f"{field}: {error}") from None

    layers = [module for module in model.modules() if isinstance(module, LAYER_TYPES)]
    embeddings = [layer for layer in layers if isinstance(layer, nn.Embedding)]
    inputs = embeddings or layers[:1]
    linears = [layer for layer in layers if isinstance(layer, nn.Linear)]
    outputs = linears[-1:]

    seen: set[int] = set()

    def take(tensors: list[nn.Parameter]) -> list[nn.Parameter]:
        fresh = [t for t in tensors if t.requires_grad and id(t) not in seen and t.ndim >= 2]
        seen.update(id(t) for t in fresh)
        return fresh

    output_params = take([layer.weight for layer in outputs])
    input_params = take([layer.weight for layer in inputs])
    hidden_params = take(list(model.parameters()))
    vector_params = [p for p in model.parameters() if p.requires_grad and p.ndim <= 1]

    transpose = bool(embeddings) and input_norm.lower() in TRANSPOSABLE_NORMS
    groups = [
        ("input", input_params, input_norm, {"transpose": True} if transpose else {}, input_scale),
        ("hidden", hidden_params, hidden_norm, {}, hidden_scale),
        ("output", output_params, output_norm, {}, output_scale),
        ("vector", vector_params, vector_norm, {}, vector_scale),
    ]
    return [
        {"name": name, "params": params, "norm": norm, "norm_kwargs": kwargs, "scale": scale}
        for name, params, norm, kwargs, scale in groups
        if params
    ]
