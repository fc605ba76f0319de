"""SAM (Foret et al. 2021) and ASAM (Kwon et al. 2021) around any base optimizer.

One step: g = grad L(w) (closure 1); e = rho * g / ||g|| (ASAM: rho * T^2 g / ||T g||, T = |w|);
grad L(w + e) (closure 2, at the perturbed weights); back to w; the base optimizer steps with
that gradient. The closure runs first, so Lightning's automatic optimization works unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.optim import Optimizer

from optiforge.optimizers.contract import LoopBinding, multi_pass
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_non_negative

BaseOptimizer = Callable[[Iterable[Any]], Optimizer]
Closure = Callable[[], Any]


BASE_NON_NEGATIVE = ("lr", "momentum", "weight_decay")


def build_base_optimizer(
    base_optimizer: BaseOptimizer, param_groups: list[dict[str, Any]], base_kwargs: dict[str, Any]
) -> Optimizer:
    """`base_optimizer(param_groups, **base_kwargs)`; a bad value (negative lr, unknown keyword)
    raises one `ValueError` that starts with `base_optimizer`."""
    keywords = {**getattr(base_optimizer, "keywords", {}), **base_kwargs}
    for name in BASE_NON_NEGATIVE:
        value = keywords.get(name)
        if isinstance(value, (int, float)):
            require_non_negative(f"base_optimizer.{name}", value)
    try:
        return base_optimizer(param_groups, **base_kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"base_optimizer: {error}") from error


class SAM(LoopBinding, Optimizer):
    """Sharpness-aware wrapper sharing `param_groups` and `state` with its base optimizer.

    LR schedulers and checkpoints see one optimizer: `state_dict()` holds the base optimizer's
    state (e.g. momentum buffers) and the SAM hyperparameters of every group.

    Every closure call runs inside `loop_hooks.pass_context(sharpness_pass)` (a no-op by default),
    so a train loop can hide the passes that are not to be reported (`log=False`: at perturbed
    weights) even from a loss that ignores the sharpness-pass contract; under Lightning
    `optiforge.callbacks.OptimizerAdapter` binds one that silences `self.log` and torchmetrics in
    those passes (`optiforge.optimizers.contract`).

    Args:
        params: parameters or parameter groups (groups may set their own `rho`, `adaptive`).
        base_optimizer: the optimizer that takes the step, a class or a partial taking the
            parameter groups (e.g. `functools.partial(torch.optim.SGD, lr=0.1, momentum=0.9)`;
            from YAML: `base_optimizer: {class_path: torch.optim.SGD, init_args: {lr: 0.1}}`).
        rho: radius of the perturbation (>= 0; 0 gives the base optimizer).
        adaptive: ASAM's scale-invariant perturbation.
        local_ascent: under DDP, compute the ascent gradient without all-reducing it, so each
            rank perturbs with its own batch (m-SAM with m = per-rank batch size). Needs the DDP
            module's `no_sync` through `bind_loop(LoopHooks(no_sync=...))`
            (optiforge.callbacks.OptimizerAdapter does it under Lightning); a no-op on one
            process.
        base_kwargs: keywords for the base optimizer, the signature of the common SAM
            implementations: `SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1,
            momentum=0.9)`. They override the partial's keywords. Python only: from YAML or the
            command line they go under `base_optimizer.init_args` (the CLI refuses them here).
    """

    loop_needs = multi_pass(
        "it evaluates its closure twice per step (at w and at the perturbed w + e)",
        local_ascent=True,
    )

    def __init__(
        self,
        params: Iterable[Any],
        base_optimizer: BaseOptimizer = torch.optim.SGD,
        rho: float = 0.05,
        adaptive: bool = False,
        local_ascent: bool = False,
        **base_kwargs: Any,
    ) -> None:
        require_non_negative("rho", rho)
        super().__init__(params, {"rho": rho, "adaptive": adaptive})
        self.base_optimizer = build_base_optimizer(base_optimizer, self.param_groups, base_kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.state = self.base_optimizer.state
        self.local_ascent = local_ascent
        self._weight_buffers: dict[torch.Tensor, torch.Tensor] = {}

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Check a group's `rho` before adding it."""
        if "rho" in param_group:
            require_non_negative("rho", param_group["rho"])
        super().add_param_group(param_group)

    def _params_with_grad(self) -> list[tuple[torch.Tensor, dict[str, Any]]]:
        return [(p, g) for g in self.param_groups for p in g["params"] if p.grad is not None]

    def _run(self, closure: Closure, sharp: SharpnessPass, ascent: bool = False) -> Any:
        """Evaluate the closure under `sharp` (without gradient sync for a local ascent; a probe
        runs without autograd, so DDP does not wait for a backward that never comes), inside
        the loop's `pass_context(sharp)`."""
        sync = self.loop_hooks.no_sync if ascent and self.local_ascent else contextlib.nullcontext
        with torch.set_grad_enabled(not sharp.probe), sync(), self.loop_pass(sharp):
            loss = closure()
        sharp.check_honoured(type(self).__name__)
        return loss

    @torch.no_grad()
    def copy_weights(self, params: list[torch.Tensor]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(parameter, copy of its current value) pairs for `restore`. The copies live in one
        buffer per parameter kept across steps (not in the state dict): a fresh |w|-sized
        allocation every step costs page faults comparable to the copy itself."""
        copies = []
        for p in params:
            buffer = self._weight_buffers.get(p)
            if buffer is None or buffer.shape != p.shape or buffer.dtype != p.dtype:
                buffer = self._weight_buffers[p] = torch.empty_like(p)
            copies.append(buffer)
        if params:
            torch._foreach_copy_(copies, [p.detach() for p in params])
        return list(zip(params, copies, strict=True))

    @torch.no_grad()
    def perturb(
        self, backup: list[tuple[torch.Tensor, torch.Tensor]] | None = None
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Move every parameter with a gradient to w + e(w); return (parameter, w) to restore
        (`backup`, a copy of the current weights the caller already holds, if given)."""
        pairs = self._params_with_grad()
        if not pairs:
            return backup or []
        params = [p for p, _ in pairs]
        scaled = [p.grad * p.abs() if g["adaptive"] else p.grad for p, g in pairs]
        norm = float(torch.linalg.vector_norm(torch.stack(torch._foreach_norm(scaled))))
        saved = backup if backup is not None else self.copy_weights(params)
        if norm == 0:
            return saved
        for group in self.param_groups:
            members = [(p, s) for (p, g), s in zip(pairs, scaled, strict=True) if g is group]
            if not members:
                continue
            group_params, group_scaled = (list(t) for t in zip(*members, strict=True))
            if group["adaptive"]:  # e = rho T^2 g / ||T g||: one more factor |w|
                group_scaled = torch._foreach_mul(group_scaled, torch._foreach_abs(group_params))
            torch._foreach_add_(group_params, group_scaled, alpha=group["rho"] / norm)
        return saved

    @staticmethod
    @torch.no_grad()
    def restore(saved: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Put the weights saved by `perturb` back, bit for bit."""
        if saved:
            params, originals = (list(t) for t in zip(*saved, strict=True))
            torch._foreach_copy_(params, originals)

    def _require_closure(self, closure: Closure | None) -> Closure:
        if closure is None:
            raise RuntimeError(
                f"{type(self).__name__}.step needs a closure that recomputes the loss and its "
                "gradients (under Lightning this happens with precision='16-mixed' or "
                "accumulate_grad_batches > 1, which do not pass one: use 32 or bf16-mixed and 1)"
            )
        self.check_loop(closure)
        return closure

    @torch.no_grad()
    def step(self, closure: Closure | None = None) -> Any:  # type: ignore[override]
        """Ascent closure at w, descent closure at w + e, base step at w; returns the loss at w."""
        closure = self._require_closure(closure)
        loss = self._run(closure, SharpnessPass(), ascent=True)
        saved = self.perturb()
        self._run(closure, SharpnessPass(perturbed=True, log=False))
        self.restore(saved)
        self.base_optimizer.step()
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.base_optimizer.zero_grad(set_to_none)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load, then share the fresh groups and state with the base optimizer again."""
        super().load_state_dict(state_dict)
        self.base_optimizer.param_groups = self.param_groups
        self.base_optimizer.state = self.state
