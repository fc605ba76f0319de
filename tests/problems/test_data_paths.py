"""The data folder is the project's own `data/` (shipped with every clone) unless overridden."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.data_paths import DATA_ENV_VAR, data_dir, data_path

PROJECT = Path(__file__).resolve().parents[2]
PACKAGES = ("lightning_modules", "datamodules", "callbacks", "optimizers", "problems", "algorithms")
SHIPPED = (
    "compas/compas.csv",
    "gnutella08/graph.txt",
    "gnutella08/pairs.txt",
    "tinyshakespeare/input.txt",
    "vrplib/LICENSE",
    "vrplib/CVRP/X-n101-k25.vrp",
    "vrplib/CVRP/X-n101-k25.sol",
)


def test_default_is_the_project_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """With OPTIFORGE_DATA unset the data folder is `<project>/data`, and it exists."""
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    assert data_dir() == PROJECT / "data"
    assert data_dir().is_dir()
    assert data_path("compas/compas.csv") == PROJECT / "data" / "compas" / "compas.csv"


def test_empty_variable_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty OPTIFORGE_DATA counts as unset (no silent `.` data folder)."""
    monkeypatch.setenv(DATA_ENV_VAR, "")
    assert data_dir() == PROJECT / "data"


def test_environment_variable_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """OPTIFORGE_DATA set to a folder makes it the data folder, even where it lacks the data."""
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    assert data_dir() == tmp_path
    assert data_path("vrplib") == tmp_path / "vrplib"


@given(
    folder=st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=12),
    relative=st.sampled_from(["compas/compas.csv", "vrplib", "gnutella08/pairs.txt"]),
)
def test_any_override_folder_is_taken_as_is(folder: str, relative: str) -> None:
    """Whatever folder OPTIFORGE_DATA names, data_path(relative) is exactly `<it>/<relative>`."""
    chosen = Path(tempfile.gettempdir()) / folder
    with mock.patch.dict(os.environ, {DATA_ENV_VAR: str(chosen)}):
        assert data_dir() == chosen
        assert data_path(relative) == chosen.joinpath(*relative.split("/"))


def test_shipped_files_and_provenance_are_in_the_project() -> None:
    """Every source folder of `data/` has a README (provenance, license) and its files."""
    root = PROJECT / "data"
    for relative in SHIPPED:
        assert (root / relative).is_file(), relative
    for source in ("compas", "gnutella08", "tinyshakespeare", "vrplib"):
        assert "Source:" in (root / source / "README.md").read_text(encoding="utf-8"), source


def test_library_code_has_no_machine_paths() -> None:
    """No package module names an absolute development path or a folder beside the clone."""
    for package in PACKAGES:
        for module in (PROJECT / package).rglob("*.py"):
            text = module.read_text(encoding="utf-8")
            for needle in ("/work/", "shared/data", '"shared"'):
                assert needle not in text, f"{module.relative_to(PROJECT)} contains {needle!r}"
