"""MTL-KD weights files: the shipped `weights/*.pt`, export from a checkpoint, and MTL-KD checks.

Every file is a `WeightsFile` (`optiforge.lightning_modules.weights_file`, the format of every
shipped model): class path (`POMOTeacher` for the teachers and the MTPOMO-style baseline,
`MTLKDStudent` for the student), init args (the architecture and `feature_scaling`), the
weights, and metadata: beside the fields every file has, the input layout the model was
trained with (`feature_layout`, `features.py` sizes), the variants it was trained on
(`variants`, None if unknown) and where training stopped (`epoch`, `global_step`). No optimizer
state, no teachers. Loading refuses another model class, architecture or feature layout,
naming the field, instead of failing inside `load_state_dict` or, worse, decoding with shifted
inputs.

Shipped files are package data in `lightning_modules/mtlkd/weights/` (`SHIPPED_DIR`), so they
are found after a plain `pip install`. `resolve_weights` maps a path to a file: as given when it
exists, else a relative `weights/mtlkd/<name>.pt` (the name configs and docs use) is looked up
in `SHIPPED_DIR`. Export: `python -m optiforge.lightning_modules.mtlkd.policy_weights <ckpt>
<out.pt>`.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
from pathlib import Path
from typing import Any

import torch
from lightning import LightningModule

from optiforge.lightning_modules.mtlkd.features import (
    CONTEXT_FEATURES,
    CUSTOMER_FEATURES,
    DEPOT_FEATURES,
)
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.lightning_modules.weights_file import (
    WeightsFile,
    load_into,
    read_checkpoint,
    read_weights_file,
    resolve_shipped,
    save_weights_file,
)
from optiforge.problems.vrp.generator import CONVENTIONS, Convention
from optiforge.problems.vrp.variants import ALL_VARIANTS

SHIPPED_DIR = Path(__file__).resolve().parent / "weights"
# Model class -> (module, the init args that shape its weights, its policy network).
MODELS: dict[str, tuple[str, tuple[str, ...], type]] = {
    "POMOTeacher": (
        "optiforge.lightning_modules.mtlkd.teacher_module",
        ("embed_dim", "num_layers", "num_heads", "ff_dim", "norm", "logit_clip", "feature_scaling"),
        POMOPolicy,
    ),
    "MTLKDStudent": (
        "optiforge.lightning_modules.mtlkd.student_module",
        ("embed_dim", "encoder_layers", "decoder_layers", "num_heads", "ff_dim", "feature_scaling"),
        HeavyDecoderPolicy,
    ),
}
CLASS_PATHS = {f"{module}.{name}": name for name, (module, _, _) in MODELS.items()}
FEATURE_LAYOUT = {
    "customer": CUSTOMER_FEATURES,
    "depot": DEPOT_FEATURES,
    "context": CONTEXT_FEATURES,
}
NOT_RECORDED = "not recorded"


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
    """`path`, or the shipped MTL-KD file a relative `weights/mtlkd/<name>.pt` names
    (`weights_file.resolve_shipped`)."""
    return resolve_shipped(path, "mtlkd")


def trained_variants(train_variants: str | list[str] | None) -> list[str] | None:
    """A datamodule's `train_variants` as a list of names ("mixed" = all 16; None stays
    unknown)."""
    if train_variants is None:
        return None
    if train_variants == "mixed":
        return list(ALL_VARIANTS)
    return [train_variants] if isinstance(train_variants, str) else list(train_variants)


def model_name(weights: WeightsFile) -> str:
    """ "POMOTeacher" or "MTLKDStudent": the MTL-KD class a file holds."""
    return CLASS_PATHS[weights.class_path]


def git_commit() -> str:
    """The commit of this checkout (what an export records; NOT_RECORDED outside git)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return NOT_RECORDED
    return done.stdout.strip()


def write_weights(
    path: str | Path,
    hparams: dict[str, Any],
    state_dict: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    half: bool = False,
) -> WeightsFile:
    """Write an MTL-KD file: the model class is the one whose architecture `hparams` (a
    module's hyperparameters) describe; `metadata` adds to the feature layout; `half` stores
    the weights as float16 (`save_weights_file`)."""
    for name, (module, keys, _) in MODELS.items():
        if set(keys) - {"feature_scaling"} <= set(hparams):
            model_class = getattr(importlib.import_module(module), name)
            init_args = {key: hparams[key] for key in keys if key in hparams}
            init_args.setdefault("feature_scaling", "raw")  # checkpoints from before the option
            break
    else:
        raise ValueError(f"hyper_parameters {sorted(hparams)} match none of {list(MODELS)}")
    metadata = {"feature_layout": dict(FEATURE_LAYOUT), **metadata}
    return save_weights_file(path, model_class, init_args, state_dict, metadata, half)


def save_weights(
    module: LightningModule, path: str | Path, variants: list[str] | None = None, **metadata: Any
) -> WeightsFile:
    """Write `module`'s class, architecture, weights, feature layout and training `variants`
    (None: its trainer's datamodule's `train_variants` when attached, else unknown) to `path`;
    `metadata` sets the training command, data convention and results (else not recorded)."""
    attached = module._trainer is not None
    if variants is None and attached:
        data = getattr(module.trainer, "datamodule", None)
        variants = trained_variants(getattr(data, "train_variants", None))
    recorded = {
        "training_command": NOT_RECORDED,
        "commit": git_commit(),
        "data": NOT_RECORDED,
        "results": [],
        "variants": variants,
        "epoch": module.current_epoch if attached else None,
        "global_step": module.global_step if attached else None,
    }
    return write_weights(path, dict(module.hparams), module.state_dict(), recorded | metadata)


def export_checkpoint(
    checkpoint: str | Path,
    path: str | Path,
    training_command: str = NOT_RECORDED,
    half: bool = False,
) -> WeightsFile:
    """Write the weights file of a Lightning checkpoint of an MTL-KD model (no optimizer
    state), recording the commit of this checkout, the data convention and training variants
    of the checkpoint's datamodule, and `training_command`; `half`: float16 storage."""
    ckpt = read_checkpoint(checkpoint)
    layout = ckpt.get("feature_layout", FEATURE_LAYOUT)
    if layout != FEATURE_LAYOUT:
        raise ValueError(
            f"checkpoint: {checkpoint} has feature layout {layout}, not {FEATURE_LAYOUT}"
        )
    data = ckpt.get("datamodule_hyper_parameters", {})
    hparams = ckpt["hyper_parameters"]
    convention = data.get("convention", NOT_RECORDED)
    size = data.get("num_customers", "?")
    metadata = {
        "training_command": training_command,
        "commit": git_commit(),
        "data": f"{convention} instances, n = {size}, "
        f"{hparams.get('feature_scaling', 'raw')} features",
        "results": [],
        "variants": trained_variants(data.get("train_variants")),
        "epoch": ckpt.get("epoch"),
        "global_step": ckpt.get("global_step"),
    }
    return write_weights(path, hparams, ckpt["state_dict"], metadata, half)


def read_weights(path: str | Path, field: str = "weights") -> WeightsFile:
    """The MTL-KD file at `path` (see `resolve_weights`), checked: a shipped-format file of an
    MTL-KD model with this feature layout; errors name `field` and the file."""
    path = resolve_weights(path)
    weights = read_weights_file(path, field)
    if weights.class_path not in CLASS_PATHS:
        raise ValueError(
            f"{field}: {path}: holds a {weights.class_path}, not one of {list(MODELS)}"
        )
    layout = weights.metadata.get("feature_layout", {})
    for key, size in FEATURE_LAYOUT.items():
        if layout.get(key) != size:
            raise ValueError(
                f"{field}: {path} was trained with {layout.get(key)} {key} features, this "
                f"model's layout has {size} (features.py changed): retrain or use a matching "
                "checkpoint"
            )
    return weights


def load_weights(module: LightningModule, path: str | Path) -> None:
    """Copy the weights in `path` into `module`; another model class, architecture or feature
    layout raises naming the field and both values."""
    weights = read_weights(path)
    model = type(module).__name__
    if model_name(weights) != model:
        raise ValueError(
            f"weights: {weights.path}: holds a {model_name(weights)}, this model is a {model}"
        )
    load_into(weights, module)


def build_module(path: str | Path, **settings: Any) -> LightningModule:
    """The MTL-KD model a weights file describes, built with its init args (plus `settings`,
    other constructor arguments such as `r3c_segment`) and loaded, in eval mode:
    `build_module("weights/mtlkd/student_n50.pt")`."""
    return read_weights(path).build(**settings)


def load_policy(path: str | Path, field: str = "weights") -> POMOPolicy | HeavyDecoderPolicy:
    """The policy network of a weights file, built with its architecture and loaded, in eval
    mode (no LightningModule): a teacher's `POMOPolicy` or the student's `HeavyDecoderPolicy`.
    A file of the wrong kind, layout or tensor shapes raises naming `field` and `path`."""
    return policy_of(read_weights(path, field), field)


def policy_of(weights: WeightsFile, field: str = "weights") -> POMOPolicy | HeavyDecoderPolicy:
    """`load_policy` of a file already read by `read_weights`."""
    policy_class = MODELS[model_name(weights)][2]
    with torch.random.fork_rng(devices=[]):  # loading must not move the caller's seed
        policy = policy_class(**weights.init_args)
    prefix = "policy."
    state = {k[len(prefix) :]: v for k, v in weights.state_dict.items() if k.startswith(prefix)}
    try:
        policy.load_state_dict(state)
    except RuntimeError as error:
        last = str(error).strip().splitlines()[-1].strip()
        raise ValueError(f"{field}: {weights.path} does not fit its architecture: {last}") from None
    return policy.eval()


def build_parser() -> argparse.ArgumentParser:
    """The export command's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m optiforge.lightning_modules.mtlkd.policy_weights",
        description="Write the weights file (optiforge-weights format) of an MTL-KD checkpoint.",
    )
    parser.add_argument("checkpoint", help="a Lightning checkpoint of POMOTeacher / MTLKDStudent")
    parser.add_argument("out", help="the weights file to write, e.g. weights/mtlkd/<name>.pt")
    parser.add_argument(
        "--training-command", default=NOT_RECORDED, help="the command that trained it"
    )
    parser.add_argument(
        "--half", action="store_true", help="store the weights as float16 (half the bytes)"
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """`python -m optiforge.lightning_modules.mtlkd.policy_weights CKPT OUT`: export; a bad
    checkpoint ends in one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        export_checkpoint(args.checkpoint, args.out, args.training_command, args.half)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")


if __name__ == "__main__":
    main()
