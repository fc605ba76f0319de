"""Read a weights file given by the user (state dict or Lightning checkpoint), checked first.

A wrong path is a user mistake and must end in one line naming the config field, before any
training starts: `read_state_dict` raises `ValueError("<field>: ...")` for a missing file, a
file torch cannot load, a file that holds no state dict, and weights that do not fit the module
they are meant for (another module class, or other sizes). Constructors call it, so the CLI
turns the error into a parser error before the trainer or the logger exists (see `train.py`).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

SHOWN_KEYS = 3


def load_weights_file(field: str, path: str, expected: str) -> dict[str, Any]:
    """The loaded file as a dict; `expected` describes the file in the error message."""
    if not Path(path).is_file():
        raise ValueError(f"{field}: no file at {path!r} (expected {expected})")
    try:
        content = torch.load(path, map_location="cpu", weights_only=False)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, OSError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(
            f"{field}: {path!r} is not a torch file ({reason}); expected {expected}"
        ) from error
    if not isinstance(content, dict):
        raise ValueError(f"{field}: {path!r} holds a {type(content).__name__}, expected {expected}")
    return content


def checkpoint_class(checkpoint: dict[str, Any]) -> str | None:
    """The module class a LightningCLI run recorded in a checkpoint (None when unknown)."""
    hyper_parameters = checkpoint.get("hyper_parameters")
    if isinstance(hyper_parameters, dict):
        return hyper_parameters.get("_class_path")
    return None


def _shown(keys: list[str]) -> str:
    more = f" (+{len(keys) - SHOWN_KEYS} more)" if len(keys) > SHOWN_KEYS else ""
    return ", ".join(keys[:SHOWN_KEYS]) + more


def weights_mismatch(state: dict[str, Tensor], module: nn.Module) -> str | None:
    """Why `state` cannot be loaded strictly into `module` (None when it can). A buffer with no
    elements is created on the first batch and sized by a loaded state (e.g. the multipliers
    of `optiforge.optimizers.DualAscent`), so its size is not compared."""
    own = module.state_dict()
    sized_on_load = {name for name, buffer in module.named_buffers() if buffer.numel() == 0}
    missing = [key for key in own if key not in state]
    unexpected = [key for key in state if key not in own]
    resized = [
        f"{key} {tuple(state[key].shape)} vs {tuple(value.shape)}"
        for key, value in own.items()
        if key in state
        and key not in sized_on_load
        and isinstance(state[key], Tensor)
        and state[key].shape != value.shape
    ]
    reasons = [
        f"{label}: {_shown(keys)}"
        for label, keys in (("missing", missing), ("unexpected", unexpected), ("shape", resized))
        if keys
    ]
    return "; ".join(reasons) or None


def read_state_dict(field: str, path: str, module: nn.Module) -> dict[str, Tensor]:
    """The state dict in `path` (a plain state dict or a Lightning checkpoint's), checked to
    fit `module` exactly; every failure is a `ValueError` naming `field` and `path`."""
    name = type(module).__name__
    content = load_weights_file(field, path, f"a {name} checkpoint or state dict")
    state = content.get("state_dict", content)
    mismatch = weights_mismatch(state, module)
    if mismatch is not None:
        source = checkpoint_class(content)
        holds = f"a checkpoint of {source}" if source else "weights"
        raise ValueError(
            f"{field}: {path!r} holds {holds} that do not fit this {name} ({mismatch})"
        )
    return state
