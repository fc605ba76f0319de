"""`lazy_exports` on a throwaway package: nothing imported before use, names cached, same-name
functions bound at once, unknown names refused."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

INIT = """
from optiforge.lazy_exports import lazy_exports

__all__ = ["Thing", "helper", "twice"]
__getattr__, __dir__ = lazy_exports(
    __name__, {"toypkg.things": ("Thing", "helper"), "toypkg.twice": ("twice",)}
)
"""


@pytest.fixture
def toypkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package `toypkg` with two modules, importable for one test."""
    package = tmp_path / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text(INIT, encoding="utf-8")
    (package / "things.py").write_text(
        "class Thing:\n    pass\ndef helper():\n    return 3\n",
        encoding="utf-8",
    )
    (package / "twice.py").write_text("def twice(x):\n    return 2 * x\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toypkg"
    for name in [m for m in sys.modules if m == "toypkg" or m.startswith("toypkg.")]:
        del sys.modules[name]


def test_module_runs_only_on_first_access(toypkg: str) -> None:
    """Importing the package leaves `things` unloaded; the first attribute access loads it."""
    package = importlib.import_module(toypkg)
    assert "toypkg.things" not in sys.modules
    assert package.helper() == 3
    assert "toypkg.things" in sys.modules
    assert package.Thing is sys.modules["toypkg.things"].Thing
    assert "Thing" in vars(package)  # cached: later accesses skip __getattr__


def test_same_name_function_is_bound_at_import(toypkg: str) -> None:
    """`toypkg.twice` is the function even after `import toypkg.twice` (the submodule)."""
    package = importlib.import_module(toypkg)
    importlib.import_module("toypkg.twice")
    assert package.twice(21) == 42


def test_dir_lists_public_names_and_unknown_names_fail(toypkg: str) -> None:
    """`dir()` shows the lazy names before they load; an unknown name is an AttributeError."""
    package = importlib.import_module(toypkg)
    assert {"Thing", "helper", "twice"} <= set(dir(package))
    with pytest.raises(AttributeError, match="'toypkg' has no attribute 'missing'"):
        package.missing  # noqa: B018
