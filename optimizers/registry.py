"""Every optimizer the project ships, by name: `available()` lists them, `create` builds one.

    >>> from optiforge.optimizers import available, create
    >>> "SAM" in available()
    True
    >>> optimizer = create("bayescurvature", [torch.zeros(2, requires_grad=True)], lr=0.01)

Names are the class names (matched case-insensitively); an unknown name raises a `ValueError`
listing the valid ones. Each class carries its `LoopNeeds` declaration
(`optiforge.optimizers.contract`), which `needs(name)` returns. The modules are imported on
first use, so listing names loads no optimizer code.
"""

from __future__ import annotations

import importlib
from typing import Any

from torch.optim import Optimizer

from optiforge.optimizers.contract import LoopNeeds

# name -> module holding the class of that name
REGISTRY: dict[str, str] = {
    "BayesCurvature": "optiforge.optimizers.bayes_curvature",
    "ClipNSGDHess": "optiforge.optimizers.nsgd_hess",
    "ClippedScion": "optiforge.optimizers.scion",
    "HessianReuseAGD": "optiforge.optimizers.hessian_reuse_agd",
    "MSAM": "optiforge.optimizers.msam",
    "MeZO": "optiforge.optimizers.zeroth_order",
    "NSAM": "optiforge.optimizers.nsam",
    "NSGDHess": "optiforge.optimizers.nsgd_hess",
    "RWSAM": "optiforge.optimizers.rwsam",
    "SAM": "optiforge.optimizers.sam",
    "Scion": "optiforge.optimizers.scion",
    "TelescopingZO": "optiforge.optimizers.zeroth_order",
    "UnconstrainedClippedScion": "optiforge.optimizers.scion",
    "UnconstrainedScion": "optiforge.optimizers.scion",
}


def available() -> list[str]:
    """The names of every optimizer the project ships, sorted."""
    return sorted(REGISTRY)


def _canonical(name: str) -> str:
    by_lower = {key.lower(): key for key in REGISTRY}
    if not isinstance(name, str) or name.lower() not in by_lower:
        raise ValueError(f"optimizer name must be one of {available()}, got {name!r}")
    return by_lower[name.lower()]


def optimizer_class(name: str) -> type[Optimizer]:
    """The class registered as `name` (its module is imported now)."""
    canonical = _canonical(name)
    return getattr(importlib.import_module(REGISTRY[canonical]), canonical)


def needs(name: str) -> LoopNeeds:
    """The loop declaration of the optimizer registered as `name`."""
    return optimizer_class(name).loop_needs


def create(name: str, params: Any, **kwargs: Any) -> Optimizer:
    """`name`'s class built on `params` (parameters or parameter groups) with `kwargs`."""
    return optimizer_class(name)(params, **kwargs)
