"""The devices tests run on: CPU always, CUDA too where a GPU is visible."""

from __future__ import annotations

import torch

DEVICES = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
