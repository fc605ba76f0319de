"""Weights-only files of the MTL-KD models: what `weights/mtlkd/*.pt` hold, and checks.

A file is {"model", "hyper_parameters", "state_dict", "feature_layout", "epoch",
"global_step"}: the model class ("POMOTeacher" for the teachers and the MTPOMO-style baseline,
"MTLKDStudent" for the student), its architecture (the module's saved hyperparameters), the
weights, the input layout it was trained with (`features.py` sizes), and where training
stopped; no optimizer state and no teachers. Loading refuses a file of another model class,
architecture or feature layout, naming the field, instead of failing inside `load_state_dict`
or, worse, decoding with shifted inputs. Files written before the "model" field are teacher
files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from lightning_modules.mtlkd.features import CONTEXT_FEATURES, CUSTOMER_FEATURES, DEPOT_FEATURES

if TYPE_CHECKING:
    from lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "weights" / "mtlkd"
ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "POMOTeacher": ("embed_dim", "num_layers", "num_heads", "ff_dim", "norm", "logit_clip"),
    "MTLKDStudent": ("embed_dim", "encoder_layers", "decoder_layers", "num_heads", "ff_dim"),
}
FEATURE_LAYOUT = {
    "customer": CUSTOMER_FEATURES,
    "depot": DEPOT_FEATURES,
    "context": CONTEXT_FEATURES,
}


def shipped_teacher_path(variant_name: str, num_customers: int = 50) -> Path:
    """Path of the shipped teacher of `variant_name` (e.g. "CVRP") at size `num_customers`."""
    return SHIPPED_DIR / f"teacher_{variant_name.lower()}_n{num_customers}.pt"


def model_of(hparams: dict) -> str:
    """The model class whose architecture `hparams` (a module's hyperparameters) describe."""
    for model, keys in ARCHITECTURES.items():
        if set(keys) <= set(hparams):
            return model
    raise ValueError(f"hyper_parameters {sorted(hparams)} match none of {list(ARCHITECTURES)}")


def _blob(hparams: dict, state_dict: dict, epoch: int | None, global_step: int | None) -> dict:
    model = model_of(hparams)
    return {
        "model": model,
        "hyper_parameters": {key: hparams[key] for key in ARCHITECTURES[model]},
        "state_dict": {key: value.detach().cpu() for key, value in state_dict.items()},
        "feature_layout": dict(FEATURE_LAYOUT),
        "epoch": epoch,
        "global_step": global_step,
    }


def save_weights(module: VRPEvaluationModule, path: str | Path) -> None:
    """Write `module`'s class, architecture, weights and feature layout to `path`."""
    attached = module._trainer is not None
    epoch = module.current_epoch if attached else None
    step = module.global_step if attached else None
    torch.save(_blob(dict(module.hparams), module.state_dict(), epoch, step), path)


def export_checkpoint(checkpoint: str | Path, path: str | Path) -> None:
    """Write the weights-only file of a Lightning checkpoint of an MTL-KD model (no optimizer
    state): `python -m lightning_modules.mtlkd.policy_weights <last.ckpt> <out.pt>`."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    layout = ckpt.get("feature_layout", FEATURE_LAYOUT)
    if layout != FEATURE_LAYOUT:
        raise ValueError(
            f"checkpoint: {checkpoint} has feature layout {layout}, not {FEATURE_LAYOUT}"
        )
    blob = _blob(ckpt["hyper_parameters"], ckpt["state_dict"], ckpt["epoch"], ckpt["global_step"])
    torch.save(blob, path)


def read_weights(path: str | Path) -> dict:
    """The blob in `path` after checking that it is an MTL-KD weights file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights: no file {path}")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    missing = {"hyper_parameters", "state_dict", "feature_layout"} - set(blob)
    if missing:
        raise ValueError(f"weights: {path} is not an MTL-KD weights file (missing {missing})")
    blob.setdefault("model", "POMOTeacher")
    return blob


def load_weights(module: VRPEvaluationModule, path: str | Path) -> None:
    """Copy the weights in `path` into `module`; another model class, architecture or feature
    layout raises naming the field and both values."""
    blob = read_weights(path)
    model = type(module).__name__
    if blob["model"] != model:
        raise ValueError(f"weights: {path} holds a {blob['model']}, this model is a {model}")
    layout = blob["feature_layout"]
    for key, size in FEATURE_LAYOUT.items():
        if layout.get(key) != size:
            raise ValueError(
                f"weights: {path} was trained with {layout.get(key)} {key} features, this "
                f"model's layout has {size} (features.py changed): retrain or use a matching "
                "checkpoint"
            )
    for key in ARCHITECTURES[model]:
        saved = blob["hyper_parameters"].get(key)
        if saved != module.hparams[key]:
            raise ValueError(
                f"weights: {path} has {key}={saved!r}, the model has {key}={module.hparams[key]!r}"
            )
    module.load_state_dict(blob["state_dict"])


def build_module(path: str | Path) -> VRPEvaluationModule:
    """The model a weights file describes, built with its architecture and loaded, in eval
    mode: `build_module("weights/mtlkd/student_n50.pt")`."""
    import lightning_modules

    blob = read_weights(path)
    module = getattr(lightning_modules, blob["model"])(
        weights=str(path), **blob["hyper_parameters"]
    )
    return module.eval()


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m lightning_modules.mtlkd.policy_weights CKPT OUT")
    export_checkpoint(sys.argv[1], sys.argv[2])
