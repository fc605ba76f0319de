"""The predictor network x -> y_theta shared by FSNet and its baselines.

An MLP with SiLU activations (FSNet's choice). With a box bound b, the output is
b * (2 sigmoid(z) - 1), FSNet's sigmoid rescaled to [-b, b], so predictions never leave the
box; without one the output layer is linear.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class Predictor(nn.Module):
    """MLP from `in_features` to `out_features` with the given hidden widths.

    Args:
        in_features: size of the parameter x.
        out_features: size of the prediction (all variables, or DC3's independent ones).
        hidden_sizes: widths of the hidden layers (at least one, each >= 1).
        box_bound: half-width of the output box, or None for a linear output.
        dtype: parameter dtype (float64 by default, like FSNet).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        hidden_sizes: tuple[int, ...],
        box_bound: float | None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        if not hidden_sizes or any(width < 1 for width in hidden_sizes):
            raise ValueError(f"hidden_sizes must be non-empty positive widths, got {hidden_sizes}")
        if box_bound is not None and box_bound <= 0:
            raise ValueError(f"box_bound must be positive or None, got {box_bound}")
        widths = (in_features, *hidden_sizes)
        layers: list[nn.Module] = []
        for width_in, width_out in zip(widths[:-1], widths[1:], strict=True):
            layers += [nn.Linear(width_in, width_out, dtype=dtype), nn.SiLU()]
        layers.append(nn.Linear(widths[-1], out_features, dtype=dtype))
        self.network = nn.Sequential(*layers)
        self.box_bound = box_bound

    def forward(self, x: Tensor) -> Tensor:
        out = self.network(x)
        if self.box_bound is None:
            return out
        return self.box_bound * (2.0 * torch.sigmoid(out) - 1.0)
