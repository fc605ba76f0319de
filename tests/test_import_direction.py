"""Imports only go down the layers, never sideways or into an ancestor package, and never cycle.

Layers: `train.py, configs -> lightning_modules, datamodules, callbacks -> optimizers, problems,
algorithms -> torch/numpy`. Inside the middle layer datamodules, lightning_modules and callbacks
never import each other: callbacks serve any Lightning project's modules, and what two of them
share lives in the layer below. The standard-library helper `lazy_exports` is below everything.
Every import counts: module level, inside functions, under TYPE_CHECKING, and the modules named
in a package's lazy re-export table. Every first-party import is under the installed namespace
(`optiforge.optimizers`, never a bare `optimizers`; `optiforge.benchmarks` for the development
benchmarks of a clone), everywhere: packages, train.py, benchmarks and tests.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
BOTTOM = {"optimizers", "problems", "algorithms"}
ALLOWED: dict[str, set[str]] = {
    "lightning_modules": set(BOTTOM),
    "datamodules": set(BOTTOM),
    "callbacks": set(BOTTOM),
    "optimizers": set(),
    "problems": set(),
    "algorithms": set(),
}
NAMESPACE = "optiforge"
NEUTRAL = {"lazy_exports"}
FIRST_PARTY = set(ALLOWED) | NEUTRAL | {"train", "benchmarks", "tests", "configs"}
# Names that exist only inside the namespace: importing one bare is always a mistake (the
# development package `benchmarks` included: `optiforge.benchmarks` in a clone).
BARE = set(ALLOWED) | NEUTRAL | {"benchmarks"}


def module_name(path: Path, root: Path = PROJECT) -> str:
    """Installed dotted name of a package file under `root` (`a/b/__init__.py` ->
    `optiforge.a.b`)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join([NAMESPACE, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def package_of(path: Path, root: Path = PROJECT) -> str:
    """Installed dotted name of the package a source file belongs to."""
    return ".".join([NAMESPACE, *path.parent.relative_to(root).parts])


def layer(module: str) -> str | None:
    """The layer (`optimizers`, ...) of a namespaced module name, None outside the namespace."""
    parts = module.split(".")
    return parts[1] if parts[0] == NAMESPACE and len(parts) > 1 else None


def is_module(name: str, root: Path) -> bool:
    """Whether a namespaced dotted name is a module or package file under `root`."""
    parts = name.split(".")
    if parts[0] != NAMESPACE:
        return False
    path = root.joinpath(*parts[1:])
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
    here, package = layer(module_name(path, root)), package_of(path, root)
    for line, module in dict.fromkeys(imported_modules(path, root)):
        top = layer(module) or module.split(".")[0]
        where = f"{path.relative_to(root)}:{line} imports {module}"
        if module.split(".")[0] in BARE:
            found.append(f"{where} (a bare name: import optiforge.{module})")
        elif top in FIRST_PARTY and top != here and top not in ALLOWED[here] | NEUTRAL:
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
            return layer(module) or module
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
    files = [path for path in source_files() if layer(module_name(path)) == package]
    assert files
    assert [found for path in files for found in violations(path)] == []


def test_no_import_cycle_between_packages() -> None:
    """Neither the top-level package graph nor the subpackage graph has a cycle."""
    top, sub = package_graph(subpackages=False), package_graph(subpackages=True)
    assert set(top) == set(ALLOWED)
    assert top["lightning_modules"] >= {"optimizers", "problems"}
    assert {"optiforge.lightning_modules.equivariant", "optiforge.problems.equivariant"} <= set(sub)
    assert "optiforge.problems.equivariant" in sub["optiforge.datamodules"]
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
        "from optiforge.problems import data_paths\n"
        "if TYPE_CHECKING:\n"
        "    from optiforge.callbacks import FitSummary\n"
        "def build():\n"
        "    import optiforge.datamodules\n"
        "    from train import main\n"
        "lazy_exports(__name__, {'optiforge.lightning_modules.classifier': ('Classifier',)})\n",
        encoding="utf-8",
    )
    found = violations(planted, tmp_path)
    imported = [line.split(" imports ")[1].split(" ")[0] for line in found]
    assert imported == [
        "optiforge.callbacks",
        "optiforge.datamodules",
        "train",
        "optiforge.lightning_modules.classifier",
    ]
    assert sum("a bare name" in line for line in found) == 0


def test_cycle_finder_on_small_graphs() -> None:
    """A hand-made 3-cycle is found; a diamond (no cycle) is not."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) == []


def every_python_file() -> list[Path]:
    """Every tracked-layout .py file: the packages, train.py, the namespace, benchmarks, tests."""
    folders = [*ALLOWED, NAMESPACE, "benchmarks", "tests"]
    return [
        PROJECT / "train.py",
        *(p for f in folders for p in sorted((PROJECT / f).rglob("*.py"))),
    ]


def bare_imports(path: Path) -> list[str]:
    """The imports in `path` of a first-party name outside the `optiforge` namespace."""
    return [
        f"{path.relative_to(PROJECT)}:{line} imports {module}"
        for line, module in imported_modules(path)
        if module.split(".")[0] in BARE
    ]


def test_no_module_imports_a_bare_first_party_name() -> None:
    """`from optimizers import SAM` would bind a user's own optimizers.py: nothing imports a
    layer outside the namespace, nor names one in a lazy re-export table."""
    files = every_python_file()
    assert len(files) > 400
    assert [found for path in files for found in bare_imports(path)] == []


def test_bare_import_checker_flags_each_form(tmp_path: Path) -> None:
    """A planted file with five bare forms gets five findings; namespaced forms get none."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import optimizers\n"
        "from callbacks.fit_summary import FitSummary\n"
        "from optiforge.optimizers import SAM\n"
        "import tests.cli_helpers\n"
        "from benchmarks.harness import Run\n"
        "from optiforge.benchmarks.harness import Benchmark\n"
        "def f():\n"
        "    from lazy_exports import lazy_exports\n"
        "lazy_exports(__name__, {'problems.vrp': ('X',)})\n",
        encoding="utf-8",
    )
    found = [m for _, m in imported_modules(planted, tmp_path) if m.split(".")[0] in BARE]
    assert found == [
        "optimizers",
        "callbacks.fit_summary",
        "benchmarks.harness",
        "lazy_exports",
        "problems.vrp",
    ]


def test_nothing_imports_the_clones_train_script() -> None:
    """`train.py` sits in a clone's root only: a benchmark run from another folder, or from an
    installed package, cannot import it (its CLI is `optiforge.cli`)."""
    found = [
        f"{path.relative_to(PROJECT)}:{line}"
        for path in every_python_file()
        for line, module in imported_modules(path)
        if module == "train" or module.startswith("train.")
    ]
    assert found == []
