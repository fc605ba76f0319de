"""Where the real benchmark data shipped with the project (`<project>/data/`) is read from."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_ENV_VAR = "OPTIFORGE_DATA"


def data_dir() -> Path:
    """The data folder: `$OPTIFORGE_DATA` if set (another copy of the data), else the project's
    own `data/` (part of every clone)."""
    if os.environ.get(DATA_ENV_VAR):
        return Path(os.environ[DATA_ENV_VAR])
    return PROJECT_ROOT / "data"


def data_path(relative: str) -> Path:
    """Path of `relative` inside the data folder (existence is the caller's check)."""
    return data_dir() / relative
