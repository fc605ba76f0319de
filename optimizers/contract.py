"""What each optimizer needs from the training loop: one typed declaration per optimizer class.

Every optimizer the project ships sets a class attribute `loop_needs = LoopNeeds(...)`. The
Lightning adapter (`optiforge.callbacks.OptimizerAdapter`), the registry
(`optiforge.optimizers.registry`), the reference module (`optiforge.lightning_modules.Classifier`)
and the contract test read it; nothing else decides what an optimizer needs. The declaration is
checked for consistency when the class is defined (at import).

An optimizer that evaluates its closure at weights other than the current ones (`extra_passes`)
receives what only the loop can give through `bind_loop(LoopHooks(...))`, a method it owns:
a context that keeps those passes out of the module's logs and metrics, and the DDP model's
`no_sync` for a per-rank ascent. Nobody sets attributes on an optimizer from outside.

Plain torch loop (no hooks needed)::

    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1)
    optimizer.step(closure)
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from optiforge.optimizers.sharpness_pass import SharpnessPass

DDPSupport = Literal["parity", "per_rank", "unsupported"]
DDP_SUPPORT = ("parity", "per_rank", "unsupported")
Reported = Literal["pre_step", "first_evaluation"]
REPORTED = ("pre_step", "first_evaluation")
ADAPTER = "optiforge.callbacks.OptimizerAdapter"


@dataclass(frozen=True)
class LoopNeeds:
    """What an optimizer needs from the loop that drives it (frozen; one per class).

    Attributes:
        closure: `step` needs a closure (it raises without one); False: the closure is optional.
        extra_passes: `step` evaluates the closure at weights other than the current ones
            (perturbed, probed or interpolated). Only the first pass at the current weights is
            to be reported; the optimizer accepts `bind_loop(LoopHooks)` to be told how.
        sharpness_pass: the closure must follow the sharpness-pass module contract
            (`optiforge.optimizers.sharpness_pass`: `select` rows, `reduce` per-sample losses);
            the optimizer raises when a closure ignores it.
        forward_only: the closure must compute the loss only (no backward, no graph).
        graph: the optimizer may ask, through its `is_second_order` property (timm's
            convention), for gradients that keep their graph (`backward(create_graph=True)`).
        local_ascent: has a `local_ascent` option whose ascent runs under the DDP model's
            `no_sync` (given through `bind_loop`).
        ddp: "parity": 2 ranks x b samples take the step one process takes on the 2b samples;
            "per_rank": runs under DDP with identical weights on every rank, but applies the
            method to each rank's rows (not one process's step on the union); "unsupported":
            refused under DDP.
        accumulation: correct under `accumulate_grad_batches > 1` (gradients summed over
            batches before one step).
        gradient_scaler: correct under fp16 AMP with a gradient scaler (which calls the closure
            once and steps without it; so never for an optimizer that needs its closure).
        half_precision: correct with 16-bit losses and gradients (bf16-mixed, 16-true).
        gradient_clipping: correct when the loop clips the gradients after every closure call
            (what Lightning's `gradient_clip_val` does).
        reports: which closure pass is to be reported (`SharpnessPass.log` True): "pre_step",
            passes at the weights before the step; "first_evaluation", the first evaluation of
            the step, which may be at perturbed weights (MeZO evaluates f(w + eps z) first).
        reason: one line for the refusals: why the clauses declared False cannot hold.
    """

    closure: bool = False
    extra_passes: bool = False
    sharpness_pass: bool = False
    forward_only: bool = False
    graph: bool = False
    local_ascent: bool = False
    ddp: DDPSupport = "parity"
    accumulation: bool = True
    gradient_scaler: bool = True
    half_precision: bool = True
    gradient_clipping: bool = True
    reports: Reported = "pre_step"
    reason: str = ""

    def __post_init__(self) -> None:
        if self.ddp not in DDP_SUPPORT:
            raise ValueError(f"ddp must be one of {list(DDP_SUPPORT)}, got {self.ddp!r}")
        if self.reports not in REPORTED:
            raise ValueError(f"reports must be one of {list(REPORTED)}, got {self.reports!r}")
        implied = {
            "extra_passes needs closure": self.extra_passes and not self.closure,
            "sharpness_pass needs extra_passes": self.sharpness_pass and not self.extra_passes,
            "forward_only needs extra_passes": self.forward_only and not self.extra_passes,
            "forward_only excludes graph": self.forward_only and self.graph,
            "extra_passes excludes accumulation": self.extra_passes and self.accumulation,
            "closure excludes gradient_scaler": self.closure and self.gradient_scaler,
            "local_ascent needs extra_passes": self.local_ascent and not self.extra_passes,
        }
        broken = [rule for rule, violated in implied.items() if violated]
        if broken:
            raise ValueError(f"inconsistent LoopNeeds: {'; '.join(broken)}")
        supports = (self.accumulation, self.half_precision, self.gradient_scaler)
        refuses = not all((*supports, self.gradient_clipping))
        refuses = refuses or self.ddp == "unsupported"
        if refuses and not self.reason:
            raise ValueError("LoopNeeds: a declaration that refuses a setting needs a reason")


def multi_pass(reason: str, **clauses: Any) -> LoopNeeds:
    """The declaration of an optimizer that evaluates its closure at other weights within a step:
    closure and extra passes, no accumulation, no gradient scaler (`reason` says why), plus
    `clauses` (e.g. `sharpness_pass=True`, `ddp="per_rank"`)."""
    return LoopNeeds(
        closure=True,
        extra_passes=True,
        accumulation=False,
        gradient_scaler=False,
        reason=reason,
        **clauses,
    )


def loop_needs(optimizer: Any) -> LoopNeeds:
    """The declaration of `optimizer` (a torch optimizer or Lightning's wrapper of one); an
    optimizer without one (e.g. `torch.optim.SGD`) needs nothing special: `LoopNeeds()`."""
    inner = getattr(optimizer, "_optimizer", optimizer)
    needs = getattr(type(inner), "loop_needs", None)
    return needs if isinstance(needs, LoopNeeds) else LoopNeeds()


def wants_graph(optimizer: Any) -> bool:
    """True when the closure's backward should keep the graph now (`create_graph=True`): the
    optimizer declares `graph` and its `is_second_order` property (timm's convention) is True."""
    inner = getattr(optimizer, "_optimizer", optimizer)
    return loop_needs(inner).graph and bool(getattr(inner, "is_second_order", False))


@dataclass(frozen=True)
class LoopHooks:
    """What a training loop hands an optimizer with `extra_passes` (defaults: plain torch loop).

    Attributes:
        pass_context: entered around every closure call with the pass's `SharpnessPass`; a loop
            uses it to keep passes with `log=False` out of its logs and metrics.
        no_sync: the DDP model's `no_sync`, entered around a `local_ascent` ascent pass.
    """

    pass_context: Callable[[SharpnessPass], contextlib.AbstractContextManager[Any]] = (
        contextlib.nullcontext
    )
    no_sync: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext


UNBOUND = LoopHooks()


def _from_lightning(closure: Any) -> bool:
    """True when `closure` was made by Lightning's training loop (its precision plugin wraps the
    loop's closure in a `functools.partial` of one of its bound methods)."""
    for _ in range(8):  # partials of bound methods, a few levels deep
        owners = (closure, getattr(closure, "__self__", None))
        modules = [type(owner).__module__ for owner in owners if owner is not None]
        if any(module.startswith(("lightning.", "pytorch_lightning.")) for module in modules):
            return True
        closure = closure.func if isinstance(closure, functools.partial) else None
        if closure is None:
            return False
    return False


class LoopBinding:
    """Mixin of the optimizers with `extra_passes`: holds the loop's `LoopHooks` and announces
    each closure pass (`loop_pass`).

    `bind_loop(hooks)` is how a loop (the adapter) gives them; `bind_loop(None)` goes back to the
    plain-loop defaults. Under Lightning without the adapter, the first step warns once, naming
    it: the passes at other weights would otherwise be logged silently."""

    loop_hooks: LoopHooks = UNBOUND
    sharpness_pass: SharpnessPass | None = None  # the pass of the closure call running now
    _warned_unbound: bool = False

    @contextlib.contextmanager
    def loop_pass(self, sharp: SharpnessPass) -> Iterator[SharpnessPass]:
        """Around closure calls of one kind: `sharpness_pass(self)` returns `sharp` to the
        closure, inside the loop's `pass_context(sharp)`."""
        self.sharpness_pass = sharp
        try:
            with self.loop_hooks.pass_context(sharp):
                yield sharp
        finally:
            self.sharpness_pass = None

    def bind_loop(self, hooks: LoopHooks | None) -> None:
        """Use `hooks` for the following steps (None: the plain-loop defaults)."""
        self.loop_hooks = UNBOUND if hooks is None else hooks

    def check_loop(self, closure: Any) -> None:
        """Warn once if a Lightning closure drives this optimizer without the adapter."""
        if self.loop_hooks is UNBOUND and not self._warned_unbound and _from_lightning(closure):
            self._warned_unbound = True
            local = (
                " (and a DDP local_ascent is not local)"
                if getattr(self, "local_ascent", False)
                else ""
            )
            warnings.warn(
                f"{type(self).__name__} runs under a Lightning Trainer without {ADAPTER}: its "
                f"closure passes at other weights reach the module's self.log and metrics{local}; "
                f"add callbacks=[{ADAPTER.rsplit('.', 1)[1]}()]",
                UserWarning,
                stacklevel=4,
            )
