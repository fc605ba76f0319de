"""Where the real benchmark data beside the project (`../shared/data/`) lives on this machine."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_ENV_VAR = "OPTIFORGE_DATA"


def shared_data_dir() -> Path:
    """The shared data folder: `$OPTIFORGE_DATA` if set, else `<project>/../shared/data`, else
    `/work/shared/data` (a clone elsewhere on the development machine)."""
    if os.environ.get(DATA_ENV_VAR):
        return Path(os.environ[DATA_ENV_VAR])
    for candidate in (PROJECT_ROOT.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return PROJECT_ROOT.parent / "shared" / "data"


def shared_data_path(relative: str) -> Path:
    """Path of `relative` inside the shared data folder (existence is the caller's check)."""
    return shared_data_dir() / relative
