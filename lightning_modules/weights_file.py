"""Weights files: the one format every shipped model uses, and user files checked before use.

Shipped weights (`lightning_modules/<system>/weights/*.pt`) are `WeightsFile`s: a dict
{"format": "optiforge-weights", "version", "class_path", "init_args", "state_dict",
"metadata"} saved with `torch.save`, read with `read_weights_file` (`torch.load` with
`weights_only=True`, class path inside `optiforge.lightning_modules`) and built with
`load_model` / `WeightsFile.build`. Model cards are generated from the metadata
(`optiforge.lightning_modules.model_card`).

A user's own file (a plain state dict or a Lightning checkpoint) is read by `read_state_dict`.

A wrong path is a user mistake and must end in one line naming the config field, before any
training starts: `read_state_dict` raises `ValueError("<field>: ...")` for a missing file, a
file torch cannot load, a file that holds no state dict, and weights that do not fit the module
they are meant for (another module class, or other sizes). Constructors call it, so the CLI
turns the error into a parser error before the trainer or the logger exists (see `train.py`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import torch
from lightning import LightningModule
from torch import Tensor, nn

SHOWN_KEYS = 3


def _reason(error: Exception) -> str:
    """The first line of a loading error, with its type (a text file gives `KeyError: 101`)."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def load_weights_file(field: str, path: str, expected: str) -> dict[str, Any]:
    """The loaded file as a dict; `expected` describes the file in the error message."""
    if not Path(path).is_file():
        raise ValueError(f"{field}: no file at {path!r} (expected {expected})")
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # zip, pickle and torch errors alike (a text file: KeyError)
        raise ValueError(
            f"{field}: {path!r} is not a torch file ({_reason(error)}); expected {expected}"
        ) from None
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


# ---- The shipped-weights format -------------------------------------------------------------

FORMAT = "optiforge-weights"
VERSION = 1
NAMESPACE = "optiforge.lightning_modules."
METADATA_FIELDS: dict[str, type] = {
    "training_command": str,
    "commit": str,
    "data": str,
    "results": list,
}
RESULT_FIELDS = ("metric", "value", "command")


class MissingWeightsFile(FileNotFoundError, ValueError):
    """A weights path that names no file: a missing file and a bad setting at once (the CLI
    reports a constructor's ValueError in one line before anything is written)."""


@dataclass(frozen=True)
class WeightsFile:
    """One shipped-weights file: the model class, its constructor arguments, its weights and
    what is known about how it was made (`metadata`: `training_command`, `commit`, `data` (the
    data convention), `results` (a list of {"metric", "value", "command"}), plus any fields a
    system adds, e.g. `epoch`, `global_step`, `variants`, `feature_layout`, `vocab`)."""

    path: Path
    class_path: str
    init_args: dict[str, Any]
    state_dict: dict[str, Tensor]
    metadata: dict[str, Any]

    @property
    def model_class(self) -> type[LightningModule]:
        """The class `class_path` names (checked by `read_weights_file`)."""
        module_name, _, name = self.class_path.rpartition(".")
        return getattr(importlib.import_module(module_name), name)

    @property
    def parameter_count(self) -> int:
        """Number of weights, buffers included (what the file stores)."""
        return sum(value.numel() for value in self.state_dict.values())

    def build(self, field: str = "weights", **settings: Any) -> LightningModule:
        """The model: `model_class(**init_args, **settings)` with the file's weights loaded
        strictly, in eval mode; weights that do not fit raise one line naming the file. The
        construction does not move the caller's random state."""
        with torch.random.fork_rng(devices=[]):
            model = self.model_class(**{**self.init_args, **settings})
        load_into(self, model, field)
        return model.eval()


def class_path_of(model_class: type) -> str:
    """The dotted path `read_weights_file` resolves back to `model_class`."""
    return f"{model_class.__module__}.{model_class.__qualname__}"


def save_weights_file(
    path: str | Path,
    model_class: type[LightningModule],
    init_args: dict[str, Any],
    state_dict: dict[str, Tensor],
    metadata: dict[str, Any],
    half: bool = False,
) -> WeightsFile:
    """Write one file in the shipped format (weights detached, on the CPU; no optimizer state)
    and return it as read back, so a bad class or metadata fails here, not at load time.
    `half` stores floating-point tensors as float16 (half the bytes in the repository; loading
    into a float32 model casts them back) and records `"storage": "float16"` in the metadata."""

    def stored(value: Tensor) -> Tensor:
        value = value.detach().cpu()
        return value.half() if half and value.is_floating_point() else value

    record = {
        "format": FORMAT,
        "version": VERSION,
        "class_path": class_path_of(model_class),
        "init_args": dict(init_args),
        "state_dict": {key: stored(value) for key, value in state_dict.items()},
        "metadata": {**metadata, **({"storage": "float16"} if half else {})},
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save(record, path)
    return read_weights_file(path, "weights file")


def torch_load(path: str | Path, field: str) -> Any:
    """`torch.load(path, weights_only=True)` on the CPU: tensors and plain containers only, no
    arbitrary unpickling (as Lightning loads a local checkpoint). A missing file is a
    `MissingWeightsFile`, an unreadable one a ValueError; both one line naming `field`."""
    if not Path(path).is_file():
        raise MissingWeightsFile(f"{field}: no file {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # zip, pickle and torch errors alike: not a readable file
        raise ValueError(f"{field}: {path}: not a readable torch file ({_reason(error)})") from None


def read_checkpoint(path: str | Path, field: str = "checkpoint") -> dict[str, Any]:
    """A Lightning checkpoint to export weights from (`torch_load`), with its weights and
    hyperparameters; anything else is one ValueError line naming `field` and `path`."""
    checkpoint = torch_load(path, field)
    if not isinstance(checkpoint, dict) or not {"hyper_parameters", "state_dict"} <= set(
        checkpoint
    ):
        raise ValueError(
            f"{field}: {path}: not a Lightning checkpoint (no weights and hyperparameters)"
        )
    return checkpoint


def _problem(record: object) -> str | None:
    """What makes a loaded `record` no shipped-weights file of ours (None when it is one)."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return f"not an {FORMAT} file (a plain state dict or checkpoint? export it first)"
    if record.get("version") != VERSION:
        return f"format version {record.get('version')!r}, this optiforge reads {VERSION}"
    for key, kind in (("class_path", str), ("init_args", dict), ("state_dict", dict)):
        if not isinstance(record.get(key), kind):
            return f"no {key} ({kind.__name__})"
    metadata = record.get("metadata")
    if not isinstance(metadata, dict):
        return "no metadata (dict)"
    wrong = [
        key for key, kind in METADATA_FIELDS.items() if not isinstance(metadata.get(key), kind)
    ]
    if wrong:
        return f"metadata lacks {wrong} (needs {list(METADATA_FIELDS)})"
    for result in metadata["results"]:
        if not isinstance(result, dict) or set(result) != set(RESULT_FIELDS):
            return f"a result {result!r} is not {{{', '.join(RESULT_FIELDS)}}}"
    return None


def _resolve_class(class_path: str) -> str | None:
    """Why `class_path` may not be built (None: an optiforge LightningModule)."""
    if not class_path.startswith(NAMESPACE):
        return f"class_path {class_path!r} is outside {NAMESPACE}*"
    module_name, _, name = class_path.rpartition(".")
    try:
        model_class = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return f"class_path {class_path!r} names no class of this optiforge"
    if not (isinstance(model_class, type) and issubclass(model_class, LightningModule)):
        return f"class_path {class_path!r} is not a LightningModule"
    return None


def resolve_shipped(path: str | Path, system: str) -> Path:
    """`path` if it exists or is absolute; else, for a relative `weights/<system>/<name>.pt`, the
    shipped file of that name in `lightning_modules/<system>/weights/` (package data, found after
    a plain `pip install`); else `path` unchanged (the reader reports it)."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    relative = PurePosixPath(path.as_posix())
    shipped = Path(__file__).resolve().parent / system / "weights" / relative.name
    if relative.parent == PurePosixPath("weights", system) and shipped.is_file():
        return shipped
    return path


def read_weights_file(
    path: str | Path, field: str = "weights", expected: type | None = None
) -> WeightsFile:
    """The file at `path`, read with `torch.load(weights_only=True)` (tensors and plain
    containers only, no arbitrary unpickling) and checked: ours, complete, a class of
    `optiforge.lightning_modules` (a subclass of `expected` when given). Every failure is one
    line `"<field>: <path>: <what is wrong>"`; a missing file is a `MissingWeightsFile`."""
    path = Path(path)
    record = torch_load(path, field)
    problem = _problem(record) or _resolve_class(record["class_path"])
    if problem is not None:
        raise ValueError(f"{field}: {path}: {problem}")
    weights = WeightsFile(
        path, record["class_path"], record["init_args"], record["state_dict"], record["metadata"]
    )
    if expected is not None and not issubclass(weights.model_class, expected):
        raise ValueError(
            f"{field}: {path}: holds a {weights.model_class.__name__}, this model is a "
            f"{expected.__name__}"
        )
    return weights


def load_into(weights: WeightsFile, model: nn.Module, field: str = "weights") -> None:
    """Copy `weights` into `model` after checking that they fit: every init arg the file
    records equals the model's hyperparameter of that name, and the state dict's keys and
    shapes are the model's; a mismatch raises one line naming the file and the difference."""
    hparams = getattr(model, "hparams", {})
    for key, saved in weights.init_args.items():
        if key in hparams and hparams[key] != saved:
            raise ValueError(
                f"{field}: {weights.path} has {key}={saved!r}, the model has {key}="
                f"{hparams[key]!r} (set model.{key}: {saved} to load it)"
            )
    mismatch = weights_mismatch(weights.state_dict, model)
    if mismatch is not None:
        raise ValueError(f"{field}: {weights.path}: weights do not fit ({mismatch})")
    model.load_state_dict(weights.state_dict)


def load_model(
    path: str | Path, field: str = "weights", expected: type | None = None, **settings: Any
) -> LightningModule:
    """The model a weights file describes, built and loaded in eval mode (`settings`: other
    constructor arguments): `load_model("lightning_modules/kv_lm/weights/<name>.pt")`."""
    return read_weights_file(path, field, expected).build(field, **settings)
