"""A non-editable install of the project, made once per test session: `pip install --no-deps
--target` of a copy of the source tree (the files a clone has), for tests that use optiforge
the way a user's own project does, from a folder that is not the clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.cli_helpers import PROJECT_ROOT

TREE = (
    "lightning_modules",
    "datamodules",
    "callbacks",
    "optimizers",
    "problems",
    "algorithms",
    "optiforge",
    "configs",
    "data",
)
FILES = ("pyproject.toml", "setup.py", "README.md", "train.py")


@dataclass(frozen=True)
class InstalledCopy:
    """Where the copy was built from (`source`, removed after the install unless kept), the
    install target (`site`, with `bin/optiforge`) and an empty working folder (`elsewhere`)."""

    source: Path
    site: Path
    elsewhere: Path

    def env(self) -> dict[str, str]:
        """Environment of a process that sees only the installed copy of optiforge."""
        return {**os.environ, "PYTHONPATH": str(self.site), "WANDB_MODE": "disabled"}

    def run(self, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
        """`python *args` in `elsewhere` with the installed copy on the path."""
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.elsewhere,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def install_copy(root: Path) -> InstalledCopy:
    """Copy the tracked layout of the project into `root/source`, install it into `root/site`."""
    source, site, elsewhere = root / "source", root / "site", root / "elsewhere"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "vrp", "constrained")
    for folder in TREE:
        shutil.copytree(PROJECT_ROOT / folder, source / folder, ignore=ignore)
    for name in FILES:
        shutil.copy(PROJECT_ROOT / name, source / name)
    elsewhere.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )
    return InstalledCopy(source, site, elsewhere)
