"""Plain nn.Modules used by the reference classifier: a small CNN and an MLP."""

from __future__ import annotations

import math

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
