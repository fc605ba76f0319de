"""The shipped MTL-KD weights are package data: found after `pip install .`, from any folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from optiforge.lightning_modules.mtlkd.policy_weights import SHIPPED_DIR, resolve_weights
from tests.cli_helpers import PROJECT_ROOT

PACKAGES = ("lightning_modules", "datamodules", "callbacks", "optimizers", "problems", "algorithms")
LOAD = """
import sys, torch
from optiforge.lightning_modules.mtlkd.policy_weights import load_policy
policy = load_policy("weights/mtlkd/teacher_vrptw_n50.pt")
torch.save(policy.state_dict(), sys.argv[1])
print(sys.modules["lightning_modules"].__file__)
"""


def test_pip_installed_package_loads_the_shipped_teacher_from_another_folder(
    tmp_path: Path,
) -> None:
    """`pip install --no-deps --target` of a copy of the project, then, in a subprocess run from
    an empty folder with only that target on PYTHONPATH, the config path
    `weights/mtlkd/teacher_vrptw_n50.pt` loads the installed teacher, equal to the source file."""
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for package in PACKAGES:
        shutil.copytree(PROJECT_ROOT / package, source / package, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT_ROOT / name, source / name)
    target, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "--target", str(target), str(source)],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(source)  # nothing may come from the copy any more
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = tmp_path / "state.pt"
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(out)],
        cwd=elsewhere,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip().startswith(str(target))
    shipped = torch.load(SHIPPED_DIR / "teacher_vrptw_n50.pt", weights_only=True)["state_dict"]
    loaded = torch.load(out, weights_only=True)
    assert loaded.keys() == {key.removeprefix("policy.") for key in shipped}
    assert all(torch.equal(value, shipped[f"policy.{key}"]) for key, value in loaded.items())


def test_resolution_prefers_the_working_directory(
    in_tmp_dir: Path,
) -> None:
    """A relative `weights/mtlkd/<name>.pt` is the shipped file unless the working directory
    has one of that name; other paths, and names not shipped, stay as given."""
    relative = Path("weights/mtlkd/student_n50.pt")
    assert resolve_weights(relative) == SHIPPED_DIR / "student_n50.pt"
    assert resolve_weights("weights/mtlkd/teacher_cvrp_n100.pt") == Path(
        "weights/mtlkd/teacher_cvrp_n100.pt"
    )
    assert resolve_weights("student_n50.pt") == Path("student_n50.pt")
    relative.parent.mkdir(parents=True)
    relative.write_bytes(b"")
    assert resolve_weights(relative) == relative
