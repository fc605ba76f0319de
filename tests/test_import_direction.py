"""Imports only go down the layers, never sideways or into an ancestor package, and never cycle.

Layers: `train.py, configs -> lightning_modules, datamodules, callbacks -> optimizers, problems,
algorithms -> torch/numpy`. Inside the middle layer datamodules and lightning_modules never
import each other; lightning_modules may import callbacks (a module may require its callback, as
the constrained modules require DualUpdates), callbacks never import lightning_modules or
datamodules (they serve any Lightning project's modules). The standard-library helper
`lazy_exports` is below everything. Every import counts: module level, inside functions, under
TYPE_CHECKING, and the modules named in a package's lazy re-export table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
BOTTOM = {"optimizers", "problems", "algorithms"}
ALLOWED: dict[str, set[str]] = {
    "lightning_modules": {"callbacks"} | BOTTOM,
    "datamodules": set(BOTTOM),
    "callbacks": set(BOTTOM),
    "optimizers": set(),
    "problems": set(),
    "algorithms": set(),
}
NEUTRAL = {"lazy_exports"}
FIRST_PARTY = set(ALLOWED) | NEUTRAL | {"train", "benchmarks", "tests", "configs"}


def module_name(path: Path, root: Path = PROJECT) -> str:
    """Dotted name of a source file under `root` (`a/b/__init__.py` -> `a.b`)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path, root: Path = PROJECT) -> str:
    """Dotted name of the package a source file belongs to."""
    return ".".join(path.parent.relative_to(root).parts)


def is_module(name: str, root: Path) -> bool:
    """Whether a dotted name is a module or package file under `root`."""
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path: Path, root: Path = PROJECT) -> Iterator[tuple[int, str]]:
    """(line, absolute module) of every import in a file, nested and lazy ones included;
    `from package import submodule` counts as importing the submodule."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = package_of(path, root).split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield node.lineno, submodule if is_module(submodule, root) else module
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports":
            table = node.args[1] if len(node.args) > 1 else None
            for key in table.keys if isinstance(table, ast.Dict) else []:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield node.lineno, key.value


def source_files() -> list[Path]:
    """Every .py file of the layered packages."""
    return sorted(path for package in ALLOWED for path in (PROJECT / package).rglob("*.py"))


def violations(path: Path, root: Path = PROJECT) -> list[str]:
    """The imports of one file that go up, sideways or into one of its ancestor packages."""
    found = []
    here, package = module_name(path, root).split(".")[0], package_of(path, root)
    for line, module in dict.fromkeys(imported_modules(path, root)):
        top = module.split(".")[0]
        where = f"{path.relative_to(root)}:{line} imports {module}"
        if top in FIRST_PARTY and top != here and top not in ALLOWED[here] | NEUTRAL:
            found.append(f"{where} ({here} may import {sorted(ALLOWED[here])})")
        elif top == here and (package == module or package.startswith(module + ".")):
            found.append(f"{where} (its own ancestor package: import the defining module)")
    return found


def package_graph(subpackages: bool) -> dict[str, set[str]]:
    """Package -> packages its files import. Top level: every import, lazy re-exports too.
    With `subpackages` each subpackage is a node and `__init__` files are left out: their
    re-exports are lazy (they run on attribute access, after every package is loaded)."""
    files = [path for path in source_files() if not subpackages or path.name != "__init__.py"]
    packages = {package_of(path) for path in source_files()}

    def node(module: str) -> str:
        if not subpackages:
            return module.split(".")[0]
        return module if module in packages else module.rpartition(".")[0]

    graph: dict[str, set[str]] = {node(package): set() for package in packages}
    for path in files:
        for _, module in imported_modules(path):
            if node(module) in graph and node(module) != node(package_of(path)):
                graph[node(package_of(path))].add(node(module))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a list of nodes (first == last), or [] when it is acyclic."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = 2
        stack.pop()
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_upward_or_sideways_import(package: str) -> None:
    """No file of the package imports a layer above it, a sibling it may not, or its ancestor."""
    files = [path for path in source_files() if module_name(path).split(".")[0] == package]
    assert files
    assert [found for path in files for found in violations(path)] == []


def test_no_import_cycle_between_packages() -> None:
    """Neither the top-level package graph nor the subpackage graph has a cycle."""
    top, sub = package_graph(subpackages=False), package_graph(subpackages=True)
    assert set(top) == set(ALLOWED)
    assert top["lightning_modules"] >= {"optimizers", "problems"}
    assert {"lightning_modules.equivariant", "problems.equivariant"} <= set(sub)
    assert "problems.equivariant" in sub["datamodules"]
    assert find_cycle(top) == []
    assert find_cycle(sub) == []


def test_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checker flags nested, relative, TYPE_CHECKING and lazy-table imports (a planted file)."""
    for name in ("datamodules", "lightning_modules", "problems"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "datamodules" / "digits.py").write_text("")
    planted = tmp_path / "datamodules" / "planted.py"
    planted.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import digits\n"
        "from problems import data_paths\n"
        "if TYPE_CHECKING:\n"
        "    from callbacks import FitSummary\n"
        "def build():\n"
        "    import datamodules\n"
        "    from train import main\n"
        "lazy_exports(__name__, {'lightning_modules.classifier': ('Classifier',)})\n",
        encoding="utf-8",
    )
    found = violations(planted, tmp_path)
    imported = [line.split(" imports ")[1].split(" ")[0] for line in found]
    assert imported == ["callbacks", "datamodules", "train", "lightning_modules.classifier"]


def test_cycle_finder_on_small_graphs() -> None:
    """A hand-made 3-cycle is found; a diamond (no cycle) is not."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) == []
