"""Lazy packages: what one import loads (fresh interpreters), and every public name and config
class_path still resolving through the packages' lazy attributes."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[1]
HEAVY = ("lightning", "torch_geometric", "pyvrp", "cvxpy")
LAZY_PACKAGES = (
    "optiforge.algorithms.covering",
    "optiforge.algorithms.diverse",
    "optiforge.algorithms.generalization",
    "optiforge.algorithms.kv_compression",
    "optiforge.algorithms.learning_rules",
    "optiforge.algorithms.order_statistics",
    "optiforge.algorithms.replicable_testing",
    "optiforge.algorithms.submodular_streaming",
    "optiforge.callbacks",
    "optiforge.datamodules",
    "optiforge.lightning_modules",
    "optiforge.lightning_modules.char_lm",
    "optiforge.lightning_modules.constrained",
    "optiforge.lightning_modules.equivariant",
    "optiforge.lightning_modules.fsnet",
    "optiforge.lightning_modules.hephaestus",
    "optiforge.lightning_modules.kv_lm",
    "optiforge.lightning_modules.mtlkd",
    "optiforge.lightning_modules.neural_es",
    "optiforge.optimizers",
    "optiforge.problems.constrained",
    "optiforge.problems.equivariant",
    "optiforge.problems.multiobjective",
    "optiforge.problems.qosd",
    "optiforge.problems.vrp",
)
# (statement, a module it must load, top-level names or module prefixes it must not load)
GUARANTEES = (
    ("import optiforge.optimizers", "optiforge.optimizers", HEAVY),
    ("from optiforge.optimizers import SAM", "optiforge.optimizers.sam", HEAVY),
    (
        "import optiforge.problems.equivariant.permutation_mlp",
        "torch",
        ("lightning", "optiforge.lightning_modules"),
    ),
    (
        "import optiforge.datamodules.digits",
        "lightning",
        ("optiforge.lightning_modules", "optiforge.datamodules.vrp"),
    ),
    (
        "import optiforge.datamodules.permutation_teacher",
        "optiforge.problems.equivariant",
        ("optiforge.lightning_modules",),
    ),
    (
        "import optiforge.lightning_modules.classifier",
        "lightning",
        ("torch_geometric", "pyvrp", "cvxpy"),
    ),
    ("from optiforge.problems.multiobjective import make_problem", "torch", ("lightning", "pymoo")),
    (  # train.py from a clone: no module, data module, graph library or W&B until used
        "import train",
        "optiforge.cli",
        ("optiforge.lightning_modules", "optiforge.datamodules", "optiforge.problems")
        + ("torch_geometric", "wandb"),
    ),
)


# Run in a fresh interpreter: imports torch, then forks a child per statement that may not load
# lightning; imports lightning, then forks one per remaining statement. Each child prints the
# sorted sys.modules after its statement (or its error) as one JSON line on a pipe.
FORKING_CHECKER = """
import json, os, sys, traceback

def after(statement):
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        try:
            exec(statement, {})
            answer = {"modules": sorted(sys.modules)}
        except BaseException:
            answer = {"error": traceback.format_exc()}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = json.loads(pipe.read())
    os.wait()
    return answer

groups = json.loads(sys.argv[1])
found = {}
import torch
preloaded = {"torch": sorted(sys.modules)}
found.update({statement: after(statement) for statement in groups["torch"]})
import lightning
preloaded["lightning"] = sorted(sys.modules)
found.update({statement: after(statement) for statement in groups["lightning"]})
print(json.dumps({"found": found, "preloaded": preloaded}))
"""


def matching(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules that are one of `prefixes` or inside one of them."""
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def preload_of(forbidden: tuple[str, ...]) -> str:
    """The heavy module the interpreter may have imported before a statement with `forbidden`."""
    return "torch" if matching(["lightning"], forbidden) else "lightning"


@pytest.fixture(scope="module")
def loaded_after() -> dict[str, Any]:
    """The sys.modules after each statement of GUARANTEES, each in a child forked from one
    interpreter (run from the project root) that had imported only what the statement may load
    anyway: torch, and lightning where it is allowed (a fresh interpreter per statement would
    import them again, seconds each on 2 cores)."""
    groups: dict[str, list[str]] = {"torch": [], "lightning": []}
    for statement, _, forbidden in GUARANTEES:
        groups[preload_of(forbidden)].append(statement)
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    result = subprocess.run(
        [sys.executable, "-c", FORKING_CHECKER, json.dumps(groups)],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.xdist_group("one_import")  # one worker runs the checker once for all of them
@pytest.mark.parametrize(("statement", "expected", "forbidden"), GUARANTEES)
def test_one_import_loads_only_what_it_needs(
    loaded_after: dict[str, Any], statement: str, expected: str, forbidden: tuple[str, ...]
) -> None:
    """`statement` loads `expected` and none of `forbidden`, none of which the interpreter had
    loaded before it."""
    answer = loaded_after["found"][statement]
    assert "error" not in answer, answer.get("error")
    assert matching(loaded_after["preloaded"][preload_of(forbidden)], forbidden) == []
    assert expected in answer["modules"]
    assert matching(answer["modules"], forbidden) == []


def type_checking_names(package: str) -> set[str]:
    """Names the package's `if TYPE_CHECKING:` block imports (what type checkers see)."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If)]
    names = set()
    for block in blocks:
        assert ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body:
            names |= {alias.asname or alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_public_names_resolve(package: str) -> None:
    """`__all__`, `dir()` and the TYPE_CHECKING imports agree, and each name resolves."""
    module = importlib.import_module(package)
    public = set(module.__all__)
    assert len(public) == len(module.__all__)
    assert type_checking_names(package) == public
    assert public <= set(dir(module))
    for name in public:
        value = getattr(module, name)
        assert not isinstance(value, type(module)), f"{package}.{name} is a module"


def test_unknown_name_is_an_attribute_error() -> None:
    """A name a package does not export raises AttributeError naming it (hasattr is False)."""
    import optiforge.optimizers

    with pytest.raises(
        AttributeError, match="'optiforge.optimizers' has no attribute 'NoSuchOptimizer'"
    ):
        optiforge.optimizers.NoSuchOptimizer  # noqa: B018
    assert not hasattr(optiforge.optimizers, "NoSuchOptimizer")


def test_moved_layers_are_the_same_objects() -> None:
    """The equivariant layers re-exported by optiforge.lightning_modules.equivariant are problems'
    own."""
    import optiforge.lightning_modules.equivariant as module
    from optiforge.problems.equivariant.permutation_mlp import PermutationMLP
    from optiforge.problems.equivariant.permutation_rep import PermutationRep

    assert module.PermutationMLP is PermutationMLP
    assert module.PermutationRep is PermutationRep


def config_class_paths() -> list[str]:
    """Every `class_path` value in configs/ (nested ones too)."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("class_path"), str):
                found.add(node["class_path"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((PROJECT / "configs").rglob("*.yaml")):
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    return sorted(found)


def test_every_config_class_path_resolves() -> None:
    """Each first-party class_path in configs/ names a class, through the lazy packages."""
    paths = [p for p in config_class_paths() if not p.startswith(("lightning.", "torch."))]
    assert {
        "optiforge.lightning_modules.Classifier",
        "optiforge.datamodules.DigitsDataModule",
    } <= set(paths)
    for path in paths:
        module, _, name = path.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), name), type), path


@pytest.mark.xdist_group("loadgroup_check")
def test_grouped_tests_carry_their_group_under_loadgroup(request: pytest.FixtureRequest) -> None:
    """Under `--dist loadgroup` (the suite's default) a test marked with an xdist_group has the
    group in its node id, which is how pytest-xdist sends a group to one worker (pytest 9.2
    broke that silently: see the test extra's pin)."""
    if not getattr(request.config.option, "loadgroup", False):  # what a worker is told
        pytest.skip("not run with --dist loadgroup")
    assert request.node.nodeid.endswith("@loadgroup_check")
