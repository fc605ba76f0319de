"""optiforge: Lightning modules, data modules, callbacks and torch optimizers for the learning
and optimization methods of NeurIPS 2025, under one import namespace.

    from optiforge.optimizers import SAM
    from optiforge.callbacks import OptimizerAdapter

Subpackages (each imported on first use): `lightning_modules`, `datamodules`, `callbacks`,
`optimizers` (no Lightning inside), `problems`, `algorithms`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("optiforge")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

# In a source tree (a clone, a worktree, an exported commit) the packages are the folders beside
# this one: search them first, so that code run from a tree is that tree's even when another
# tree is installed in editable mode. An installed copy has them inside this folder instead.
_TREE = Path(__file__).resolve().parent.parent
if (_TREE / "setup.py").is_file() and (_TREE / "optimizers" / "__init__.py").is_file():
    __path__.append(str(_TREE))
