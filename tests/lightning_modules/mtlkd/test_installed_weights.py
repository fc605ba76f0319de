"""The shipped MTL-KD weights are package data: found after `pip install .`, from any folder."""

from __future__ import annotations

from pathlib import Path

import torch

from optiforge.lightning_modules.mtlkd.policy_weights import SHIPPED_DIR, resolve_weights
from tests.installed_copy import InstalledCopy

LOAD = """
import sys, torch
from optiforge.lightning_modules.mtlkd.policy_weights import load_policy
policy = load_policy("weights/mtlkd/teacher_vrptw_n50.pt")
torch.save(policy.state_dict(), sys.argv[1])
print(sys.modules["optiforge.lightning_modules"].__file__)
"""


def test_pip_installed_package_loads_the_shipped_teacher_from_another_folder(
    installed_copy: InstalledCopy, tmp_path: Path
) -> None:
    """In a subprocess run from an empty folder with only a non-editable install on PYTHONPATH,
    the config path `weights/mtlkd/teacher_vrptw_n50.pt` loads the installed teacher, equal to
    the source file."""
    out = tmp_path / "state.pt"
    done = installed_copy.run("-c", LOAD, str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith(str(installed_copy.site))
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
