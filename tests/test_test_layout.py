"""Test layout: every test has a docstring and every test folder mirrors a project path."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def suite_files(tests: Path = TESTS) -> list[Path]:
    """Every test_*.py file under the tests folder, sorted."""
    return sorted(tests.rglob("test_*.py"))


def undocumented_tests(source: str) -> list[str]:
    """Names of the test functions in `source` that have no docstring."""
    return [
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and not ast.get_docstring(node)
    ]


def unmirrored_folders(files: list[Path], tests: Path = TESTS, root: Path = ROOT) -> list[str]:
    """Test files in a sub-folder of `tests` that mirrors no package or module under `root`."""
    bad = []
    for path in files:
        folder = path.parent.relative_to(tests)
        if folder == Path("."):
            continue  # top-level tests are project-wide
        if not ((root / folder).is_dir() or (root / folder).with_suffix(".py").is_file()):
            bad.append(str(path.relative_to(tests)))
    return bad


def test_every_test_function_has_a_docstring() -> None:
    """Each test_* function in every test file under tests/ has a docstring."""
    missing = [
        f"{path.relative_to(ROOT)}::{name}"
        for path in suite_files()
        for name in undocumented_tests(path.read_text())
    ]
    assert not missing, "test functions without a docstring:\n" + "\n".join(missing)


def test_docstring_check_reports_a_missing_docstring() -> None:
    """The docstring check reports an undocumented test and accepts a documented one."""
    source = 'def test_a():\n    assert True\n\n\ndef test_b():\n    """Checks b."""\n'
    assert undocumented_tests(source) == ["test_a"]
    assert undocumented_tests("async def test_c():\n    pass\n") == ["test_c"]


def test_every_test_folder_mirrors_a_project_path() -> None:
    """Each tests/<a>/.../test_*.py sits in a folder mirroring a project package or module."""
    assert len(suite_files()) > 50  # the walk finds the suite
    bad = unmirrored_folders(suite_files())
    assert not bad, "test files in folders that mirror no project path:\n" + "\n".join(bad)


def test_folder_check_reports_a_folder_without_a_package(tmp_path: Path) -> None:
    """The folder check flags a test under a folder with no project package or module."""
    (tmp_path / "problems" / "qosd").mkdir(parents=True)
    (tmp_path / "optimizers.py").write_text("")
    tests = tmp_path / "tests"
    files = [
        tests / "test_top.py",
        tests / "problems" / "qosd" / "test_checker.py",
        tests / "optimizers" / "test_sam.py",
        tests / "problems" / "missing" / "test_x.py",
    ]
    assert unmirrored_folders(files, tests, tmp_path) == ["problems/missing/test_x.py"]
