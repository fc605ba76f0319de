"""Lazy re-exports for the packages' `__init__`s (PEP 562 module `__getattr__` / `__dir__`).

A package lists where each public name lives; the module holding a name is imported on its first
attribute access, so `import optiforge.optimizers` loads no Lightning and
`import optiforge.datamodules.digits` loads no other data module. Standard library only: every
package may import it (the bottom layer).

    __getattr__, __dir__ = lazy_exports(__name__, {"optiforge.optimizers.sam": ("SAM",)})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, sources: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose public names are `sources[module]`.

    A name equal to its module's own name (`optiforge.optimizers.sharpness_pass.sharpness_pass`) is
    bound at once: importing the submodule later would otherwise set the package attribute to the
    module.
    """
    where = {name: module for module, names in sources.items() for name in names}
    namespace = sys.modules[package]
    for module, names in sources.items():
        leaf = module.rpartition(".")[2]
        if leaf in names:
            setattr(namespace, leaf, getattr(importlib.import_module(module), leaf))

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(namespace, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(namespace), *where})

    return __getattr__, __dir__
