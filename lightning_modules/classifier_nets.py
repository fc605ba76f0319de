"""Plain nn.Modules used by the reference classifier: a small CNN, an MLP and a small
transformer."""

from __future__ import annotations

import math

import torch
from torch import nn


def small_cnn(
    input_shape: tuple[int, ...], num_classes: int, channels: tuple[int, ...], dropout: float
) -> nn.Sequential:
    """3x3 conv + ReLU blocks (2x2 max-pool after each, while the map is at least 2 wide),
    then global average pooling and a linear head. No batch norm, so per-process statistics
    cannot make a DDP run differ from a single-process one."""
    if len(input_shape) != 3:
        raise ValueError(
            f"model.input_shape must be (channels, height, width) for the cnn, got {input_shape}"
        )
    layers: list[nn.Module] = []
    in_channels, side = input_shape[0], min(input_shape[1:])
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.ReLU()]
        if side >= 2:
            layers.append(nn.MaxPool2d(2))
            side //= 2
        in_channels = out_channels
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(dropout)]
    layers.append(nn.Linear(in_channels, num_classes))
    return nn.Sequential(*layers)


def mlp(
    input_shape: tuple[int, ...], num_classes: int, hidden_sizes: tuple[int, ...], dropout: float
) -> nn.Sequential:
    """Flatten, then Linear + ReLU (+ dropout) per hidden size, then a linear head."""
    layers: list[nn.Module] = [nn.Flatten()]
    width = math.prod(input_shape)
    for hidden in hidden_sizes:
        layers += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout)]
        width = hidden
    layers.append(nn.Linear(width, num_classes))
    return nn.Sequential(*layers)


class Tokens(nn.Module):
    """Inputs as token sequences: the rows of a (C, H, W) image (H tokens of C * W values) or
    the features of a flat input (one token per feature), embedded to `width` plus a learned
    position embedding."""

    def __init__(self, input_shape: tuple[int, ...], width: int) -> None:
        super().__init__()
        if len(input_shape) == 3:
            channels, height, row = input_shape
            count, size = height, channels * row
        else:
            count, size = math.prod(input_shape), 1
        self.count, self.size = count, size
        self.embed = nn.Linear(size, width)
        self.position = nn.Parameter(torch.randn(count, width) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, *input_shape] -> [batch, tokens, width]."""
        if x.dim() == 4:  # (B, C, H, W) -> (B, H, C * W): one token per image row
            x = x.permute(0, 2, 1, 3)
        return self.embed(x.reshape(x.shape[0], self.count, self.size)) + self.position


class TokenMean(nn.Module):
    """Mean over the token axis: [batch, tokens, width] -> [batch, width]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def small_transformer(
    input_shape: tuple[int, ...], num_classes: int, widths: tuple[int, ...], dropout: float
) -> nn.Sequential:
    """Pre-norm transformer encoder over `Tokens` (one layer per entry of `widths`, all equal:
    the model width; gcd(width, 4) heads, feed-forward 2 x width), mean-pooled, layer-normed,
    then a linear head."""
    width = widths[0]
    if any(w != width for w in widths):
        raise ValueError(
            f"model.widths must all be equal for the transformer (the model width, one entry "
            f"per layer), got {widths}"
        )
    layer = nn.TransformerEncoderLayer(
        width, math.gcd(width, 4), 2 * width, dropout, batch_first=True, norm_first=True
    )
    encoder = nn.TransformerEncoder(layer, len(widths), enable_nested_tensor=False)
    return nn.Sequential(
        Tokens(input_shape, width),
        encoder,
        TokenMean(),
        nn.LayerNorm(width),
        nn.Linear(width, num_classes),
    )
