"""Weights-only teacher files: what `weights/mtlkd/teacher_<variant>_n50.pt` holds, and checks.

A file is {"hyper_parameters", "state_dict", "feature_layout", "epoch", "global_step"}: the
architecture (the module's saved hyperparameters), the policy's weights, the input layout it
was trained with (`features.py` sizes), and where training stopped; no optimizer state.
Loading refuses a file whose architecture or feature layout differs from the model's, naming
the field, instead of failing inside `load_state_dict` or, worse, decoding with shifted inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from lightning_modules.mtlkd.features import CONTEXT_FEATURES, CUSTOMER_FEATURES, DEPOT_FEATURES

if TYPE_CHECKING:
    from lightning_modules.mtlkd.teacher_module import POMOTeacher

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "weights" / "mtlkd"
ARCHITECTURE = ("embed_dim", "num_layers", "num_heads", "ff_dim", "norm", "logit_clip")
FEATURE_LAYOUT = {
    "customer": CUSTOMER_FEATURES,
    "depot": DEPOT_FEATURES,
    "context": CONTEXT_FEATURES,
}


def shipped_teacher_path(variant_name: str, num_customers: int = 50) -> Path:
    """Path of the shipped teacher of `variant_name` (e.g. "CVRP") at size `num_customers`."""
    return SHIPPED_DIR / f"teacher_{variant_name.lower()}_n{num_customers}.pt"


def _blob(hparams: dict, state_dict: dict, epoch: int | None, global_step: int | None) -> dict:
    return {
        "hyper_parameters": {key: hparams[key] for key in ARCHITECTURE},
        "state_dict": {key: value.detach().cpu() for key, value in state_dict.items()},
        "feature_layout": dict(FEATURE_LAYOUT),
        "epoch": epoch,
        "global_step": global_step,
    }


def save_teacher_weights(module: POMOTeacher, path: str | Path) -> None:
    """Write `module`'s architecture, weights and feature layout to `path` (weights only)."""
    attached = module._trainer is not None
    epoch = module.current_epoch if attached else None
    step = module.global_step if attached else None
    torch.save(_blob(dict(module.hparams), module.state_dict(), epoch, step), path)


def export_checkpoint(checkpoint: str | Path, path: str | Path) -> None:
    """Write the weights-only file of a Lightning checkpoint of `POMOTeacher` (no optimizer
    state): `python -m lightning_modules.mtlkd.teacher_weights <last.ckpt> <out.pt>`."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    blob = _blob(ckpt["hyper_parameters"], ckpt["state_dict"], ckpt["epoch"], ckpt["global_step"])
    torch.save(blob, path)


def read_teacher_weights(path: str | Path) -> dict:
    """The blob in `path` after checking that it is a teacher weights file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights: no file {path}")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    missing = {"hyper_parameters", "state_dict", "feature_layout"} - set(blob)
    if missing:
        raise ValueError(f"weights: {path} is not a teacher weights file (missing {missing})")
    return blob


def load_teacher_weights(module: POMOTeacher, path: str | Path) -> None:
    """Copy the weights in `path` into `module`; a different architecture or feature layout
    raises naming the field and both values."""
    blob = read_teacher_weights(path)
    layout = blob["feature_layout"]
    for key, size in FEATURE_LAYOUT.items():
        if layout.get(key) != size:
            raise ValueError(
                f"weights: {path} was trained with {layout.get(key)} {key} features, this "
                f"model's layout has {size} (features.py changed): retrain or use a matching "
                "checkpoint"
            )
    for key in ARCHITECTURE:
        saved = blob["hyper_parameters"].get(key)
        if saved != module.hparams[key]:
            raise ValueError(
                f"weights: {path} has {key}={saved!r}, the model has {key}={module.hparams[key]!r}"
            )
    module.load_state_dict(blob["state_dict"])


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m lightning_modules.mtlkd.teacher_weights CKPT OUT")
    export_checkpoint(sys.argv[1], sys.argv[2])
