"""Test-wide settings: W&B never goes online, and runs write into a temporary directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Under pytest-xdist (the default `-n auto`) each worker computes on one thread, and so do the
# processes it starts: the workers share the cores instead of oversubscribing them.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ["OMP_NUM_THREADS"] = "1"

from tests.devices import DEVICES
from tests.installed_copy import InstalledCopy, install_copy

# Property tests draw the same examples on every run: CI is reproducible, never flaky by luck.
settings.register_profile("optiforge", derandomize=True, deadline=None)
settings.load_profile("optiforge")

os.environ.setdefault("WANDB_MODE", "disabled")
os.environ["WANDB_SILENT"] = "true"
os.environ.pop("WANDB_API_KEY", None)

PROJECT_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test with a fresh temporary directory as the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def installed_copy(tmp_path_factory: pytest.TempPathFactory) -> InstalledCopy:
    """A non-editable install of the project (once per session), used from an empty folder."""
    return install_copy(tmp_path_factory.mktemp("installed"))


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """The device a test runs on: every test taking this fixture runs on CPU and, where a GPU is
    available, again on CUDA (select those runs with `-k cuda`)."""
    return request.param


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the installed copy share one worker, so the project is installed once."""
    for item in items:
        if "installed_copy" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("installed_copy"))
