"""Checks a training config before any retraining starts: files exist, the model tests, the data
has a test split and can resample its training set. Errors are one-line `ValueError`s that name
the field, so that a bad config fails before anything runs."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

RESAMPLE_ARGUMENT = "train_resample_seed"
LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning")


def merged_config(paths: Sequence[Path]) -> dict[str, Any]:
    """The YAML files merged in order, later files overriding earlier ones key by key (as
    `train.py --config a --config b` does for the keys read here)."""
    merged: dict[str, Any] = {}
    for path in paths:
        if not path.is_file():
            raise ValueError(f"config: no such file {str(path)!r}")
        try:
            content = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            raise ValueError(f"config: {str(path)!r} is not valid YAML ({error})") from None
        if not isinstance(content, dict):
            raise ValueError(f"config: {str(path)!r} is not a mapping of options")
        merge_into(merged, content)
    return merged


def merge_into(target: dict[str, Any], update: dict[str, Any]) -> None:
    """Recursive dict update: nested mappings merge, anything else replaces."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge_into(target[key], value)
        else:
            target[key] = value


def resolve(field: str, class_path: object) -> type:
    """The class a `class_path` names; a missing or unimportable one raises naming `field`."""
    if not isinstance(class_path, str) or "." not in class_path:
        raise ValueError(f"{field}.class_path: must name a class, got {class_path!r}")
    module, _, name = class_path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ValueError(f"{field}.class_path: cannot import {class_path!r}") from None
    if not inspect.isclass(found):
        raise ValueError(f"{field}.class_path: {class_path!r} is not a class")
    return found


def defines(cls: type, method: str) -> bool:
    """Whether `cls` (or a base outside Lightning) defines `method`, not only Lightning's stub."""
    owner = next((base for base in cls.__mro__ if method in vars(base)), None)
    return owner is not None and owner.__module__.split(".")[0] not in LIGHTNING_PACKAGES


def check_config(paths: Sequence[Path], metric: str) -> dict[str, Any]:
    """Merged config of `paths` if its runs can be retrained on resampled training sets and log
    `test/<metric>`; otherwise a ValueError naming the field."""
    config = merged_config(paths)
    if config.get("test_after_fit") is False:
        raise ValueError(f"test_after_fit: is false in the config, so no run logs test/{metric}")
    model = config.get("model") or {}
    data = config.get("data") or {}
    if not isinstance(model, dict) or not isinstance(data, dict):
        raise ValueError("config: model and data must be class_path/init_args mappings")
    model_class = resolve("model", model.get("class_path"))
    data_class = resolve("data", data.get("class_path"))
    if not defines(model_class, "test_step"):
        raise ValueError(
            f"model.class_path: {model_class.__name__} has no test_step, so no run logs "
            f"test/{metric}"
        )
    if not defines(data_class, "test_dataloader"):
        raise ValueError(
            f"data.class_path: {data_class.__name__} has no test split, so no run logs "
            f"test/{metric}"
        )
    if RESAMPLE_ARGUMENT not in inspect.signature(data_class.__init__).parameters:
        raise ValueError(
            f"data.class_path: {data_class.__name__} has no {RESAMPLE_ARGUMENT} argument to "
            "resample its training set per retraining"
        )
    return config
