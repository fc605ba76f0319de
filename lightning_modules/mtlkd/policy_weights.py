"""Weights-only files of the MTL-KD models: what the shipped `weights/*.pt` hold, and checks.

A file is {"model", "hyper_parameters", "state_dict", "feature_layout", "variants", "epoch",
"global_step"}: the model class ("POMOTeacher" for the teachers and the MTPOMO-style baseline,
"MTLKDStudent" for the student), its architecture (the module's saved hyperparameters), the
weights, the input layout it was trained with (`features.py` sizes; the hyperparameter
`feature_scaling` is "raw" for files written before it existed), the variants it was trained on
(None if unknown), and where training stopped; no optimizer state and no teachers.
Loading refuses a file of another model class, architecture or feature layout, naming the
field, instead of failing inside `load_state_dict` or, worse, decoding with shifted inputs.
Files written before the "model" field are teacher files.

Shipped files are package data in `lightning_modules/mtlkd/weights/` (`SHIPPED_DIR`), so they
are found after a plain `pip install`. `resolve_weights` maps a path to a file: as given when it
exists, else a relative `weights/mtlkd/<name>.pt` (the name configs and docs use) is looked up
in `SHIPPED_DIR`.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import torch
from lightning import LightningModule

from optiforge.lightning_modules.mtlkd.features import (
    CONTEXT_FEATURES,
    CUSTOMER_FEATURES,
    DEPOT_FEATURES,
)
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.problems.vrp.generator import CONVENTIONS, Convention
from optiforge.problems.vrp.variants import ALL_VARIANTS

SHIPPED_DIR = Path(__file__).resolve().parent / "weights"
SHIPPED_PREFIX = PurePosixPath("weights/mtlkd")
ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "POMOTeacher": ("embed_dim", "num_layers", "num_heads", "ff_dim", "norm", "logit_clip"),
    "MTLKDStudent": ("embed_dim", "encoder_layers", "decoder_layers", "num_heads", "ff_dim"),
}
# Settings every model has beside its architecture, with the value files without them mean.
FEATURE_SETTINGS: dict[str, str] = {"feature_scaling": "raw"}
FEATURE_LAYOUT = {
    "customer": CUSTOMER_FEATURES,
    "depot": DEPOT_FEATURES,
    "context": CONTEXT_FEATURES,
}


class MissingWeightsFile(FileNotFoundError, ValueError):
    """A weights path that names no file: a missing file and a bad setting at once (the CLI
    reports a constructor's ValueError in one line before anything is written)."""


def shipped_teacher_path(
    variant_name: str, num_customers: int = 50, *, convention: Convention
) -> Path:
    """Path of the shipped teacher of `variant_name` (e.g. "CVRP") at size `num_customers`
    trained on `convention`'s instances: "mvmoe" (`teacher_<variant>_mvmoe_n<size>.pt`, what
    the MTL-KD configs use, instance-scaled features) or "routefinder"
    (`teacher_<variant>_n<size>.pt`, raw features). No default: the two differ in instances
    and features, and a silent default once picked the other one than the configs."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {list(CONVENTIONS)}, got {convention!r}")
    tag = "_mvmoe" if convention == "mvmoe" else ""
    return SHIPPED_DIR / f"teacher_{variant_name.lower()}{tag}_n{num_customers}.pt"


def resolve_weights(path: str | Path) -> Path:
    """`path` if it exists; else, for a relative `weights/mtlkd/<name>.pt`, the shipped file of
    that name (installed as package data); else `path` unchanged (the reader reports it)."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    relative = PurePosixPath(path.as_posix())
    if relative.parent == SHIPPED_PREFIX and (SHIPPED_DIR / relative.name).is_file():
        return SHIPPED_DIR / relative.name
    return path


def trained_variants(train_variants: str | list[str] | None) -> list[str] | None:
    """A datamodule's `train_variants` as a list of names ("mixed" = all 16; None stays
    unknown)."""
    if train_variants is None:
        return None
    if train_variants == "mixed":
        return list(ALL_VARIANTS)
    return [train_variants] if isinstance(train_variants, str) else list(train_variants)


def model_of(hparams: dict) -> str:
    """The model class whose architecture `hparams` (a module's hyperparameters) describe."""
    for model, keys in ARCHITECTURES.items():
        if set(keys) <= set(hparams):
            return model
    raise ValueError(f"hyper_parameters {sorted(hparams)} match none of {list(ARCHITECTURES)}")


def _blob(
    hparams: dict,
    state_dict: dict,
    variants: list[str] | None,
    epoch: int | None,
    global_step: int | None,
) -> dict:
    model = model_of(hparams)
    return {
        "model": model,
        "hyper_parameters": {key: hparams[key] for key in ARCHITECTURES[model]}
        | {key: hparams.get(key, default) for key, default in FEATURE_SETTINGS.items()},
        "state_dict": {key: value.detach().cpu() for key, value in state_dict.items()},
        "feature_layout": dict(FEATURE_LAYOUT),
        "variants": variants,
        "epoch": epoch,
        "global_step": global_step,
    }


def save_weights(
    module: LightningModule, path: str | Path, variants: list[str] | None = None
) -> None:
    """Write `module`'s class, architecture, weights, feature layout and training `variants`
    (None: its trainer's datamodule's `train_variants` when attached, else unknown) to `path`."""
    attached = module._trainer is not None
    epoch = module.current_epoch if attached else None
    step = module.global_step if attached else None
    if variants is None and attached:
        data = getattr(module.trainer, "datamodule", None)
        variants = trained_variants(getattr(data, "train_variants", None))
    torch.save(_blob(dict(module.hparams), module.state_dict(), variants, epoch, step), path)


def export_checkpoint(checkpoint: str | Path, path: str | Path) -> None:
    """Write the weights-only file of a Lightning checkpoint of an MTL-KD model (no optimizer
    state): `python -m optiforge.lightning_modules.mtlkd.policy_weights <last.ckpt> <out.pt>`."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    layout = ckpt.get("feature_layout", FEATURE_LAYOUT)
    if layout != FEATURE_LAYOUT:
        raise ValueError(
            f"checkpoint: {checkpoint} has feature layout {layout}, not {FEATURE_LAYOUT}"
        )
    data = ckpt.get("datamodule_hyper_parameters", {})
    variants = trained_variants(data.get("train_variants"))
    hparams, weights = ckpt["hyper_parameters"], ckpt["state_dict"]
    blob = _blob(hparams, weights, variants, ckpt["epoch"], ckpt["global_step"])
    torch.save(blob, path)


def read_weights(path: str | Path, field: str = "weights") -> dict:
    """The blob in `path` (see `resolve_weights`) after checking that it is an MTL-KD weights
    file; errors name `field`, the setting the path came from."""
    path = resolve_weights(path)
    if not path.is_file():
        raise MissingWeightsFile(f"{field}: no file {path}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle, zip and torch errors alike: not a weights file
        raise ValueError(f"{field}: {path} is not a torch weights file ({error})") from error
    if not isinstance(blob, dict):
        raise ValueError(f"{field}: {path} is not an MTL-KD weights file (no dict inside)")
    missing = {"hyper_parameters", "state_dict", "feature_layout"} - set(blob)
    if missing:
        raise ValueError(f"{field}: {path} is not an MTL-KD weights file (missing {missing})")
    blob.setdefault("model", "POMOTeacher")
    for key, default in FEATURE_SETTINGS.items():
        blob["hyper_parameters"].setdefault(key, default)
    blob.setdefault("variants", None)
    if blob["model"] not in ARCHITECTURES:
        raise ValueError(
            f"{field}: {path} holds a {blob['model']!r}, not one of {list(ARCHITECTURES)}"
        )
    return blob


def check_blob(blob: dict, model: str, path: str | Path, field: str = "weights") -> None:
    """Refuse a blob of another model class or feature layout, naming `field` and both values."""
    if blob["model"] != model:
        raise ValueError(f"{field}: {path} holds a {blob['model']}, this model is a {model}")
    layout = blob["feature_layout"]
    for key, size in FEATURE_LAYOUT.items():
        if layout.get(key) != size:
            raise ValueError(
                f"{field}: {path} was trained with {layout.get(key)} {key} features, this "
                f"model's layout has {size} (features.py changed): retrain or use a matching "
                "checkpoint"
            )


def load_weights(module: LightningModule, path: str | Path) -> None:
    """Copy the weights in `path` into `module`; another model class, architecture or feature
    layout raises naming the field and both values."""
    blob = read_weights(path)
    model = type(module).__name__
    check_blob(blob, model, path)
    for key in (*ARCHITECTURES[model], *FEATURE_SETTINGS):
        saved = blob["hyper_parameters"].get(key)
        if saved != module.hparams[key]:
            raise ValueError(
                f"weights: {path} has {key}={saved!r}, the model has {key}="
                f"{module.hparams[key]!r} (set model.{key}: {saved} to load it)"
            )
    module.load_state_dict(blob["state_dict"])


def load_policy(path: str | Path, field: str = "weights") -> POMOPolicy | HeavyDecoderPolicy:
    """The policy network of a weights file, built with its architecture and loaded, in eval
    mode (no LightningModule): a teacher's `POMOPolicy` or the student's `HeavyDecoderPolicy`.
    A file of the wrong kind, layout or tensor shapes raises naming `field` and `path`."""
    return policy_from_blob(read_weights(path, field), path, field)


def policy_from_blob(
    blob: dict, path: str | Path, field: str = "weights"
) -> POMOPolicy | HeavyDecoderPolicy:
    """`load_policy` of a blob already read by `read_weights`."""
    check_blob(blob, blob["model"], path, field)
    policy_class = {"POMOTeacher": POMOPolicy, "MTLKDStudent": HeavyDecoderPolicy}[blob["model"]]
    with torch.random.fork_rng(devices=[]):  # loading must not move the caller's seed
        policy = policy_class(**blob["hyper_parameters"])
    prefix = "policy."
    weights = {k[len(prefix) :]: v for k, v in blob["state_dict"].items() if k.startswith(prefix)}
    try:
        policy.load_state_dict(weights)
    except RuntimeError as error:
        last = str(error).strip().splitlines()[-1].strip()
        raise ValueError(f"{field}: {path} does not fit its architecture: {last}") from None
    return policy.eval()


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3:
        raise SystemExit(
            "usage: python -m optiforge.lightning_modules.mtlkd.policy_weights CKPT OUT"
        )
    export_checkpoint(sys.argv[1], sys.argv[2])
