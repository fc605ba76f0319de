"""The optimizer zoo's entrants: every registered optimizer plus four peers, each with its
defaults read from configs/optimizers/ (or its class defaults) and what a testbed must give it.

Defaults are set in one place: an entrant with a config file (`FILES`) takes the `optimizer:`
block of those files, stacked in order (a SAM-family `base_optimizer` block becomes the base
class and its keyword arguments, as `SAM(params, SGD, rho=..., lr=..., momentum=...)` takes
them); an entrant without one takes its class's defaults. Only `lr` is tuned by the zoo.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import yaml
from torch.optim import Optimizer

from optiforge.benchmarks.harness.record import ROOT
from optiforge.optimizers import available
from optiforge.optimizers.contract import LoopNeeds
from optiforge.optimizers.registry import optimizer_class

CONFIGS = ROOT / "configs" / "optimizers"
# The testbed's own AdamW config (lr / weight decay the testbed was set up with).
ADAMW_FILES = {
    "digits_cnn": ("adamw.yaml",),
    "char_lm": ("adamw_lm.yaml",),
    "compas_mlp": ("adamw_compas.yaml",),
}
# Config files of registered optimizers and peers (others: class defaults).
FILES: dict[str, tuple[str, ...]] = {
    "SGD (momentum)": ("sgd.yaml",),
    "SAM": ("sam.yaml",),
    "MSAM": ("sam.yaml", "msam.yaml"),
    "NSAM": ("sam.yaml", "nsam.yaml"),
    "RWSAM": ("sam.yaml", "rwsam.yaml"),
    "NSGDHess": ("nsgd_hess.yaml",),
    "ClipNSGDHess": ("clip_nsgd_hess.yaml",),
    "ClippedScion": ("clipped_scion.yaml",),
    "pytorch-optimizer SAM": ("sam.yaml",),
}


# Entrants whose lr is bounded above (a Frank-Wolfe weight, HessianReuseAGD's step size eta):
# grid points above the bound are left out of their grid (and listed in the results).
LR_BOUNDS = {"Scion": 1.0, "ClippedScion": 1.0, "HessianReuseAGD": 1.0}


def resolve(class_path: str) -> Any:
    module, _, name = class_path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def config_defaults(files: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """(class path, keyword arguments) of the `optimizer:` blocks of `files` stacked in order;
    a `base_optimizer` block becomes the base class plus its init_args as keyword arguments."""
    class_path, kwargs = "", {}
    for name in files:
        block = yaml.safe_load((CONFIGS / name).read_text())["optimizer"]
        class_path = block["class_path"]
        kwargs.update(block.get("init_args") or {})
    base = kwargs.pop("base_optimizer", None)
    if isinstance(base, dict):
        kwargs = {
            "base_optimizer": resolve(base["class_path"]),
            **base.get("init_args", {}),
            **kwargs,
        }
    return class_path, kwargs


PEER_SAM_NEEDS = LoopNeeds(
    closure=True, gradient_scaler=False, reason="its step runs the closure (twice per step here)"
)


def closure_first_sam(params: Any, **kwargs: Any) -> Optimizer:
    """pytorch-optimizer's SAM under Lightning: its `step(closure)` perturbs along the gradients
    that exist before the call (its documented usage computes them first), so the closure runs
    once more before its step."""
    from pytorch_optimizer import SAM as PeerSAM

    class ClosureFirst(PeerSAM):
        @torch.no_grad()
        def step(self, closure: Callable[[], Any] | None = None) -> Any:
            if closure is None:
                raise ValueError("pytorch-optimizer SAM needs a closure")
            with torch.enable_grad():
                loss = closure()
            super().step(closure)
            return loss

    ClosureFirst.loop_needs = PEER_SAM_NEEDS
    return ClosureFirst(params, **kwargs)


@dataclass(frozen=True)
class Entrant:
    """One optimizer of the zoo: how to build it at a learning rate on a model's parameters."""

    name: str
    cls: Callable[..., Optimizer]
    defaults: dict[str, Any] = field(default_factory=dict)
    peer: bool = False
    needs: LoopNeeds = field(default_factory=LoopNeeds)

    @property
    def max_lr(self) -> float:
        """The largest lr the optimizer accepts (`LR_BOUNDS`; inf: unbounded)."""
        return LR_BOUNDS.get(self.name, math.inf)

    @property
    def default_lr(self) -> float:
        """The lr of the config file, else of the class signature."""
        if "lr" in self.defaults:
            return float(self.defaults["lr"])
        return float(inspect.signature(self.cls).parameters["lr"].default)

    def build(self, params: Any, lr: float, seed: int, batch_size: int) -> Optimizer:
        """The optimizer at `lr`; an optimizer with a `seed` gets the run's seed, n-SAM descends
        on the first half of each batch and ascends on the second, m-SAM takes 4 micro-batches
        per batch (the batch stays the testbed's, so every entrant sees the same data)."""
        kwargs = {**self.defaults, "lr": lr}
        accepted = inspect.signature(self.cls).parameters
        if "seed" in accepted:
            kwargs["seed"] = seed
        if self.name == "NSAM":
            kwargs["descent_batch_size"] = batch_size // 2
        if self.name == "MSAM":
            kwargs["micro_batch_size"] = batch_size // 4
        return self.cls(params, **kwargs)

    def skip_reason(self, model: torch.nn.Module, hessian_limit: int) -> str | None:
        """Why this entrant cannot run on `model` (None: it can): HessianReuseAGD's d x d
        Hessian (and its eigendecomposition) on more than `hessian_limit` parameters."""
        if self.name != "HessianReuseAGD":
            return None
        count = sum(p.numel() for p in model.parameters())
        if count <= hessian_limit:
            return None
        gib = count**2 * 4 / 2**30
        return f"d x d Hessian of d = {count} parameters ({gib:.2f} GiB) > {hessian_limit} limit"


def _registered(name: str) -> Entrant:
    cls = optimizer_class(name)
    if name in FILES:
        class_path, defaults = config_defaults(FILES[name])
        if resolve(class_path) is not cls:
            raise ValueError(f"{FILES[name]} configure {class_path}, not {name}")
        return Entrant(name, cls, defaults, needs=cls.loop_needs)
    return Entrant(name, cls, needs=cls.loop_needs)


def entrants(testbed: str) -> tuple[list[Entrant], dict[str, str]]:
    """The entrants on `testbed` (AdamW first: the reference of every ratio) and the peers that
    are missing, with why."""
    adamw = Entrant("AdamW", torch.optim.AdamW, config_defaults(ADAMW_FILES[testbed])[1])
    sgd = Entrant("SGD (momentum)", torch.optim.SGD, config_defaults(FILES["SGD (momentum)"])[1])
    zoo = [adamw, sgd, *(_registered(name) for name in available())]
    missing: dict[str, str] = {}
    try:
        from pytorch_optimizer import SCION
    except ImportError as error:
        for name in ("pytorch-optimizer SAM", "pytorch-optimizer SCION"):
            missing[name] = f"pytorch_optimizer not installed ({error})"
        return zoo, missing
    zoo.append(
        Entrant(
            "pytorch-optimizer SAM",
            closure_first_sam,
            config_defaults(FILES["pytorch-optimizer SAM"])[1],
            peer=True,
            needs=PEER_SAM_NEEDS,
        )
    )
    # SCION(constraint=False) is UnconstrainedScion's update: same defaults, so one lr grid
    lr = Entrant("UnconstrainedScion", optimizer_class("UnconstrainedScion")).default_lr
    zoo.append(Entrant("pytorch-optimizer SCION", SCION, {"lr": lr}, peer=True))
    return zoo, missing
