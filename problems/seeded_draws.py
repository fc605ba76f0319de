"""Seeded random draws that work whichever device the data lives on.

A `torch.Generator` only draws onto its own device (a CPU generator cannot fill a CUDA tensor).
These helpers draw on the generator's device and move the result to where it is used, so a CPU
generator gives the same numbers on CPU and CUDA runs (reproducible across machines), and a CUDA
generator draws on the GPU without a copy.
"""

from __future__ import annotations

import torch
from torch import Tensor


def uniform(
    shape: tuple[int, ...], generator: torch.Generator, device: torch.device | str
) -> Tensor:
    """U[0, 1) draws of `shape` from `generator`, on `device`."""
    return torch.rand(shape, generator=generator, device=generator.device).to(device)


def integers(
    low: int,
    high: int,
    shape: tuple[int, ...],
    generator: torch.Generator,
    device: torch.device | str,
) -> Tensor:
    """Integers uniform in [low, high) of `shape` from `generator`, on `device`."""
    draws = torch.randint(low, high, shape, generator=generator, device=generator.device)
    return draws.to(device)


def normal(
    shape: tuple[int, ...],
    generator: torch.Generator | None,
    device: torch.device | str,
    dtype: torch.dtype | None = None,
) -> Tensor:
    """Standard normal draws of `shape` on `device` (the global stream when `generator` is None)."""
    if generator is None:
        return torch.randn(shape, device=device, dtype=dtype)
    return torch.randn(shape, generator=generator, device=generator.device, dtype=dtype).to(device)


def categorical(
    probabilities: Tensor, num_samples: int, generator: torch.Generator | None
) -> Tensor:
    """`num_samples` draws with replacement per row of `probabilities` [R, K] -> [R, S], on the
    probabilities' device (drawn on the generator's)."""
    if generator is None:
        return torch.multinomial(probabilities, num_samples, True)
    draws = torch.multinomial(
        probabilities.to(generator.device), num_samples, True, generator=generator
    )
    return draws.to(probabilities.device)
