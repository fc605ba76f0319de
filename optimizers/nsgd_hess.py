"""NSGDHess and Clip NSGDHess: normalized SGD with Hessian-vector corrected momentum.

Sadiev, Richtárik, Fatkhullin (2025), "Second-order Optimization under Heavy-Tailed Noise: Hessian
Clipping and Sample Complexity Limits", arXiv 2510.10690, Alg. 1 (NSGDHess) and Alg. 2 (Clip
NSGDHess). Iteration t >= 1, with the iterate x being all parameters of all groups as one vector:

    q_t ~ U[0, 1],  x̂_t = q_t x_t + (1 - q_t) x_{t-1},  v_t = x_t - x_{t-1}
    g_t = (1 - α)(g_{t-1} + ∇²f(x̂_t) v_t) + α ∇f(x_t)                        (Alg. 1)
    g_t = (1 - α)(g_{t-1} + γ clip(γ⁻¹ ∇²f(x̂_t) v_t, λ_h)) + α clip(∇f(x_t), λ)  (Alg. 2)
    x_{t+1} = x_t - γ g_t / ‖g_t‖,   clip(v, λ) = min{1, λ / ‖v‖} v

At t = 0 there is no x_{-1}: g_0 = ∇f(x_0) (Alg. 2: clip(∇f(x_0), λ)). All norms are global
Euclidean norms over every parameter of every group, as in the paper. Under DDP the gradients are
all-reduced before the step, so the norms need no extra communication; the HVP must then be
hvp="finite_difference" ("auto" picks it): DDP does not synchronize higher-order gradients, so
"autograd" HVPs would differ by rank.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import torch
import torch.distributed as dist
from torch import Tensor
from torch.optim.optimizer import Optimizer, ParamsT

from optiforge.optimizers.contract import LoopBinding, multi_pass
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_choice, require_in_range, require_positive

HvpMode = Literal["auto", "autograd", "finite_difference"]
HVP_MODES = ("auto", "autograd", "finite_difference")
GENERATOR_STATE_KEY = "q_generator_state"
GRAPH_STATE_KEY = "closure_keeps_graph"


def distributed() -> bool:
    """True inside a process group of more than one rank (DDP)."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def global_norm(tensors: Iterable[Tensor]) -> Tensor:
    """Euclidean norm of all `tensors` taken together as one vector (0 for an empty list)."""
    norms = torch._foreach_norm(list(tensors))
    if not norms:
        return torch.zeros(())
    return torch.linalg.vector_norm(torch.stack(norms))


def clip_coefficient(norm: Tensor, max_norm: float | Tensor) -> Tensor:
    """min{1, λ / ‖v‖}, the factor of clip(v, λ) = min{1, λ/‖v‖} v; it is 1 for v = 0."""
    return (max_norm / norm).clamp(max=1.0)


class NSGDHess(LoopBinding, Optimizer):
    """Normalized SGD with Hessian-corrected momentum (Alg. 1); every step has length exactly γ.

    `step(closure)` follows torch's LBFGS contract: the closure zeroes the gradients, computes the
    loss, calls backward and returns the loss. Closure calls per step: 1 at the first step (and
    whenever the previous step was zero); afterwards 2 with hvp="autograd" (at x̂_t with a graph,
    one double backward for the HVP, then at x_t), 3 with hvp="finite_difference" (at x̂_t ± h v_t
    and at x_t, all first order). The returned loss is the one at x_t.

    "autograd" needs the closure's backward to keep the graph (`create_graph=True`);
    `is_second_order` tells train loops so (timm's convention, honoured by
    `optiforge.lightning_modules.Classifier.backward`). "finite_difference" works with plain
    closures: ∇²f(x̂) v ≈ (∇f(x̂ + h v) - ∇f(x̂ - h v)) / (2h), h = fd_step (1 + ‖x̂‖) / ‖v‖, so the
    perturbation h v has the relative length fd_step; it is exact for quadratics up to rounding.
    "auto" (the default, drop-in for any closure or LightningModule) asks for the graph through
    `is_second_order` and uses "autograd" at a step when the closure's previous gradients (at
    x_{t-1}) carried one, else "finite_difference"; always "finite_difference" under DDP, where it
    also stops asking for the graph. So a module that honours `is_second_order` gets the exact HVP
    in 2 closure calls, and a plain one (Lightning's default backward) 3 calls.

    Parameters whose `.grad` is None after the closure at x_t are left untouched, as in torch.optim.
    q_t is drawn as `torch.rand((), generator=g, dtype=torch.float64)` from a generator seeded with
    `seed`; its state is part of `state_dict()`, so a reloaded optimizer draws the same q's.

    Args:
        params: parameters or parameter groups (per group: `lr`, `alpha`).
        lr: γ > 0, the length of every step in the global Euclidean norm.
        alpha: α in (0, 1], the weight of the fresh stochastic gradient in g_t.
        hvp: "auto" (see above), "autograd" (exact, double backward) or "finite_difference"
            (central difference).
        fd_step: relative length of the finite-difference perturbation (> 0).
        seed: seed of the generator of q_t; None takes `torch.initial_seed()`, so that
            `seed_everything` decides and all DDP ranks draw the same q's.
    """

    loop_needs = multi_pass(
        "it evaluates its closure 2-3 times per step (at x̂_t and x_t), and its "
        "finite-difference HVP of 16-bit or clipped gradients is not the Hessian's product "
        "(Clip NSGDHess clips by itself)",
        graph=True,
        half_precision=False,
        gradient_clipping=False,
    )

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.01,
        alpha: float = 0.1,
        hvp: HvpMode = "auto",
        fd_step: float = 1e-3,
        seed: int | None = None,
    ) -> None:
        require_choice("hvp", hvp, HVP_MODES)
        require_positive("fd_step", fd_step)
        self.hvp = hvp
        self.fd_step = fd_step
        self.closure_keeps_graph = False  # learnt from the closure's gradients at every step
        self._generator = torch.Generator().manual_seed(
            torch.initial_seed() if seed is None else seed
        )
        super().__init__(params, {"lr": lr, "alpha": alpha})

    @property
    def is_second_order(self) -> bool:
        """True when the closure's backward should use `create_graph=True`: hvp="autograd", and
        hvp="auto" outside DDP."""
        return self.hvp == "autograd" or (self.hvp == "auto" and not distributed())

    def hvp_method(self) -> str:
        """The HVP the next step uses: "autograd" or "finite_difference" (resolves "auto")."""
        if self.hvp != "auto":
            return self.hvp
        exact = self.closure_keeps_graph and not distributed()
        return "autograd" if exact else "finite_difference"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group and validate its hyperparameters (defaults and per-group overrides)."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        require_positive("lr", group["lr"])
        require_in_range("alpha", group["alpha"], 0.0, 1.0, low_open=True)

    def state_dict(self) -> dict[str, Any]:
        """torch's state (g_{t-1}: `momentum`, x_{t-1}: `previous_param`) plus the q generator
        and whether the closure kept the graph (so a resumed "auto" run takes the same path)."""
        state = super().state_dict()
        state[GENERATOR_STATE_KEY] = self._generator.get_state()
        state[GRAPH_STATE_KEY] = self.closure_keeps_graph
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` saved, including the generator of q_t."""
        if GENERATOR_STATE_KEY not in state_dict:
            raise ValueError(
                f"state_dict has no {GENERATOR_STATE_KEY!r}: "
                f"it was not saved by {type(self).__name__}"
            )
        state_dict = dict(state_dict)
        generator_state = state_dict.pop(GENERATOR_STATE_KEY)
        self.closure_keeps_graph = bool(state_dict.pop(GRAPH_STATE_KEY, False))
        super().load_state_dict(state_dict)
        self._generator.set_state(generator_state)

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor:
        """One iteration of Alg. 1 (Alg. 2 in the subclass); returns the loss at x_t."""
        if closure is None:
            raise RuntimeError(
                f"{type(self).__name__}.step needs a closure that zeroes the gradients, computes "
                "the loss, calls backward and returns the loss (torch.optim.LBFGS contract)"
            )
        self.check_loop(closure)
        params = [p for group in self.param_groups for p in group["params"]]
        current = {p: p.detach().clone() for p in params}  # x_t, becomes x_{t-1}
        hessian_terms = self._hessian_terms(closure, current)
        with torch.enable_grad():
            loss = closure()
        grads = [p.grad for p in params if p.grad is not None]
        self.closure_keeps_graph = any(grad.grad_fn is not None for grad in grads)
        self._update(hessian_terms)
        for p in params:
            if self.state[p]:
                self.state[p]["previous_param"] = current[p]
        return loss

    def _hessian_terms(
        self, closure: Callable[[], Tensor], current: dict[Tensor, Tensor]
    ) -> dict[Tensor, Tensor]:
        """Hessian terms of g_t for the parameters that have an x_{t-1}, computed at x̂_t;
        draws q_t and leaves the parameters at x_t."""
        tracked = [p for p in current if "previous_param" in self.state[p]]
        if not tracked:
            return {}
        q = torch.rand((), generator=self._generator, dtype=torch.float64).item()
        x_t = [current[p] for p in tracked]
        v = torch._foreach_sub(x_t, [self.state[p]["previous_param"] for p in tracked])
        v_norm = global_norm(v)
        if v_norm == 0:
            return {}
        torch._foreach_add_(tracked, v, alpha=q - 1.0)  # x̂_t = x_t - (1 - q_t) v_t
        try:
            # the closure calls at x̂_t (x̂_t ± h v) are away from x_t: not to be reported
            with self.loop_pass(SharpnessPass(perturbed=True, log=False)):
                if self.hvp_method() == "autograd":
                    hv = self._autograd_hvp(closure, tracked, v)
                else:
                    hv = self._finite_difference_hvp(closure, tracked, v, v_norm)
        finally:
            torch._foreach_copy_(tracked, x_t)  # back to x_t, also when the closure raises
        return dict(zip(tracked, self._hessian_term(hv, v_norm), strict=True))

    def _update(self, hessian_terms: dict[Tensor, Tensor]) -> None:
        """g_t from the gradients at x_t and the Hessian terms, then x_{t+1} = x_t - γ g_t/‖g_t‖."""
        active = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        if not active:
            return
        if self.hvp == "autograd":
            self._require_graph(active)
        grad_terms = dict(
            zip(active, self._gradient_term([p.grad.detach() for p in active]), strict=True)
        )
        for group in self.param_groups:
            members = [p for p in group["params"] if p in grad_terms]
            seen = [p for p in members if "momentum" in self.state[p]]
            for p in members:
                if "momentum" not in self.state[p]:
                    self.state[p]["momentum"] = grad_terms[p].clone()  # g_0 (clipped in Alg. 2)
            if seen:
                momenta = [self.state[p]["momentum"] for p in seen]
                corrections = [hessian_terms.get(p, torch.zeros_like(p)) for p in seen]
                torch._foreach_add_(momenta, corrections)
                torch._foreach_lerp_(momenta, [grad_terms[p] for p in seen], group["alpha"])
        norm = global_norm(self.state[p]["momentum"] for p in active).item()
        for group in self.param_groups:
            members = [p for p in group["params"] if p in grad_terms]
            if members and norm > 0:
                momenta = [self.state[p]["momentum"] for p in members]
                torch._foreach_add_(members, momenta, alpha=-group["lr"] / norm)
        for p in active:
            if p.grad.grad_fn is not None:
                p.grad = p.grad.detach()  # break the parameter <-> graph cycle of create_graph

    def _require_graph(self, params: list[Tensor]) -> None:
        """Raise unless some gradient carries a graph (the closure used create_graph=True)."""
        grads = [p.grad for p in params if p.grad is not None]
        if grads and all(grad.grad_fn is None for grad in grads):
            raise RuntimeError(
                f"{type(self).__name__}(hvp='autograd') got gradients without a graph: call "
                "backward(create_graph=True) in the closure (optimizer.is_second_order is True; "
                "optiforge.lightning_modules.Classifier does this) or use hvp='finite_difference'"
            )

    def _gradient_term(self, grads: list[Tensor]) -> list[Tensor]:
        """∇f(x_t) as it enters g_t (Alg. 1: unchanged)."""
        return grads

    def _hessian_term(self, hv: list[Tensor], v_norm: Tensor) -> list[Tensor]:
        """∇²f(x̂_t) v_t as it enters g_t (Alg. 1: unchanged)."""
        return hv

    def _gradients(self, params: list[Tensor]) -> list[Tensor]:
        """Detached copies of the gradients of `params`, zeros where `.grad` is None."""
        return [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in params]

    def _autograd_hvp(
        self, closure: Callable[[], Tensor], params: list[Tensor], v: list[Tensor]
    ) -> list[Tensor]:
        """∇²f(x̂) v by one double backward through the graph the closure kept; needs
        `create_graph=True` in the closure's backward."""
        with torch.enable_grad():
            closure()
            self._require_graph(params)
            pairs = [
                (p.grad, vi)
                for p, vi in zip(params, v, strict=True)
                if p.grad is not None and p.grad.grad_fn is not None
            ]
            hv = (
                torch.autograd.grad(
                    [grad for grad, _ in pairs],
                    params,
                    grad_outputs=[vi for _, vi in pairs],
                    allow_unused=True,
                )
                if pairs
                else [None] * len(params)
            )
        for p in params:
            p.grad = None  # free the graph before the closure at x_t
        return [torch.zeros_like(p) if h is None else h for p, h in zip(params, hv, strict=True)]

    def _finite_difference_hvp(
        self,
        closure: Callable[[], Tensor],
        params: list[Tensor],
        v: list[Tensor],
        v_norm: Tensor,
    ) -> list[Tensor]:
        """(∇f(x̂ + h v) - ∇f(x̂ - h v)) / (2h), h = fd_step (1 + ‖x̂‖) / ‖v‖; two closure calls."""
        x_hat = [p.detach().clone() for p in params]
        h = (self.fd_step * (1.0 + global_norm(x_hat)) / v_norm).item()
        torch._foreach_add_(params, v, alpha=h)
        with torch.enable_grad():
            closure()
        grad_plus = self._gradients(params)
        torch._foreach_copy_(params, x_hat)
        torch._foreach_add_(params, v, alpha=-h)
        with torch.enable_grad():
            closure()
        grad_minus = self._gradients(params)
        hv = torch._foreach_sub(grad_plus, grad_minus)
        torch._foreach_div_(hv, 2.0 * h)
        return hv


class ClipNSGDHess(NSGDHess):
    """Clip NSGDHess (Alg. 2): NSGDHess with the gradient clipped at λ and the Hessian term
    γ clip(γ⁻¹ ∇²f(x̂_t) v_t, λ_h), for high-probability guarantees under heavy-tailed noise.

    γ in the Hessian term is the length ‖v_t‖ of the previous step, which equals the paper's γ
    for a constant step size (every step has length exactly γ); then γ clip(γ⁻¹ H v, λ_h) =
    clip(H v, λ_h ‖v‖), i.e. λ_h bounds ‖H u‖ along the unit direction u = v/‖v‖. Both clips
    use global norms. Closure calls and all other arguments as in `NSGDHess`.

    Args:
        params: parameters or parameter groups (per group: `lr`, `alpha`).
        lr: γ > 0, the length of every step in the global Euclidean norm.
        alpha: α in (0, 1], the weight of the fresh stochastic gradient in g_t.
        grad_clip: λ > 0, the clipping level of the stochastic gradient.
        hess_clip: λ_h > 0, the clipping level of γ⁻¹ ∇²f(x̂_t) v_t.
        hvp: "auto", "autograd" or "finite_difference", as in `NSGDHess`.
        fd_step: relative length of the finite-difference perturbation (> 0).
        seed: seed of the generator of q_t; None takes `torch.initial_seed()`.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 0.01,
        alpha: float = 0.1,
        grad_clip: float = 1.0,
        hess_clip: float = 1.0,
        hvp: HvpMode = "auto",
        fd_step: float = 1e-3,
        seed: int | None = None,
    ) -> None:
        require_positive("grad_clip", grad_clip)
        require_positive("hess_clip", hess_clip)
        self.grad_clip = grad_clip
        self.hess_clip = hess_clip
        super().__init__(params, lr=lr, alpha=alpha, hvp=hvp, fd_step=fd_step, seed=seed)

    def _gradient_term(self, grads: list[Tensor]) -> list[Tensor]:
        """clip(∇f(x_t), λ) over all parameters."""
        return torch._foreach_mul(grads, clip_coefficient(global_norm(grads), self.grad_clip))

    def _hessian_term(self, hv: list[Tensor], v_norm: Tensor) -> list[Tensor]:
        """γ clip(γ⁻¹ ∇²f(x̂_t) v_t, λ_h) = clip(∇²f(x̂_t) v_t, λ_h ‖v_t‖), with γ = ‖v_t‖."""
        return torch._foreach_mul(hv, clip_coefficient(global_norm(hv), self.hess_clip * v_norm))
