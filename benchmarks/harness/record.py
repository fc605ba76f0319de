"""The provenance a result carries: command, git commit and dirty flag, package versions, torch
threads, device, seed and wall time; and the scrubbing that keeps machine paths out of results."""

from __future__ import annotations

import datetime
import platform
import re
import subprocess
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("optiforge", "torch", "numpy", "lightning")
FOLDERS = "benchmarks|data|docs|configs|lightning_modules|datamodules|problems|algorithms"
_CHECKOUT = re.compile(rf"(?<![\w.])(?:/[^/\s\"']+)+?/({FOLDERS})/")
_ABSOLUTE = re.compile(r"(?<![\w.])/(?:tmp|home|Users|work|root|mnt|scratch|var)/[^\s\"']*")


def git_state(root: Path = ROOT) -> dict[str, object]:
    """The checked-out commit and whether tracked files differ from it (None outside git)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, check=True
            )
        except (OSError, subprocess.CalledProcessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def versions(peers: Sequence[str] = ()) -> dict[str, str | None]:
    """Python's and each installed distribution's version (None when not installed)."""
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in (*PACKAGES, *peers):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def provenance(
    command: str, *, preset: str, seed: object, device: str, peers: Sequence[str] = ()
) -> dict[str, object]:
    """The record every result starts with (wall time is filled in when it is written)."""
    import torch

    return {
        "command": command,
        "preset": preset,
        "git": git_state(),
        "versions": versions(peers),
        "torch_threads": torch.get_num_threads(),
        "device": device,
        "seed": seed,
        "started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "wall_seconds": 0.0,
    }


def scrub_path(text: str) -> str:
    """A string with this checkout's root made relative and other absolute paths under a
    temporary or home folder reduced to `<local>/...`, so no result names a machine."""
    text = text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    text = _CHECKOUT.sub(r"\1/", text)  # a path inside another checkout of the project
    return _ABSOLUTE.sub(lambda m: "<local>/" + m.group(0).split("/", 2)[2], text)


def scrub_paths(value: object) -> object:
    """`scrub_path` over every string in a JSON-like value."""
    if isinstance(value, str):
        return scrub_path(value)
    if isinstance(value, dict):
        return {key: scrub_paths(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_paths(item) for item in value]
    return value
