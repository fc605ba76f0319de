"""RW-SAM: Reweighted SAM (Luo, Harandi, Phung, Le, NeurIPS 2025).

m-SAM's benefit comes from perturbing with noisy per-sample structure; RW-SAM keeps one
parallel batch and instead reweights the samples of the ascent loss by Gibbs weights
p_i = softmax_i(lambda * ||grad f_i(w)||), the solution of max_{P in simplex} <sum p_i grad f_i,
eps> + H(P) / lambda. The per-sample gradient norms come from one extra forward pass:
||grad f_i|| ~ |f_i(w + delta z) - f_i(w)| / delta with z a Rademacher vector
(E <grad f_i, z>^2 = ||grad f_i||^2). One step costs SAM plus one forward:

1. probe (forward only) at w + delta z: per-sample losses f_i(w + delta z);
2. ascent at w: per-sample losses f_i(w), weights p_i, gradient of sum_i p_i f_i(w);
3. e = rho * g / ||g||; descent at w + e on the uniform mean loss; base step at w.

Choices the paper leaves open, made here: one z shared by all samples of a step and drawn
afresh each step from a seeded generator (saved in the state dict); z's entries are +-1 on every
parameter (no normalization), so delta is a per-coordinate step; the weights are detached
(no gradient through p); they sum to 1, so the ascent loss is a weighted mean and rho keeps its
meaning; the descent loss is the uniform mean (the objective being minimized). With dropout the
probe and the ascent pass draw different masks, which adds noise to the estimate. Under DDP the
Gibbs weights are normalized over the samples of all ranks (two scalar all-reduces per step),
so 2 ranks x b samples take the step one process takes on 2b; with `local_ascent` each rank
reweights and perturbs with its own batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.distributed as dist

from optiforge.optimizers.contract import multi_pass
from optiforge.optimizers.sam import SAM, BaseOptimizer, Closure
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_non_negative, require_positive

_BYTE_SIGNS = (torch.arange(256)[:, None] >> torch.arange(8)).bitwise_and(1) * 2 - 1


def sign_buffer(numel: int, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialized buffer `rademacher` can write `numel` signs into (rounded up to 8)."""
    return torch.empty(-(-numel // 8) * 8, dtype=dtype)


def rademacher(
    numel: int, generator: torch.Generator, dtype: torch.dtype, out: torch.Tensor | None = None
) -> torch.Tensor:
    """`numel` independent +-1 entries (CPU). Each random byte becomes 8 signs through a 256 x 8
    lookup table (one gather): about 5x faster than unpacking bits with shifts, and 10x faster
    than one draw per entry. Written into `out` (from `sign_buffer(numel, dtype)`) when given;
    the result is then a view of `out`."""
    rows = -(-numel // 8)
    words = torch.randint(
        -(2**63), 2**63 - 1, (-(-rows // 8),), generator=generator, dtype=torch.int64
    )
    codes = words.view(torch.uint8)[:rows].long()
    if out is None:
        out = sign_buffer(numel, dtype)
    if out.dtype != dtype or out.ndim != 1 or out.numel() < rows * 8:
        raise ValueError(f"out must be a 1-D {dtype} tensor of >= {rows * 8} entries")
    torch.index_select(_BYTE_SIGNS.to(dtype), 0, codes, out=out[: rows * 8].view(rows, 8))
    return out[:numel]


def ranks_sharing_the_ascent() -> int:
    """The DDP world size when a process group is up (its ranks reweight one global batch), else
    1. Every rank draws the same probe direction z (same seed), so their estimates agree."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


class RWSAM(SAM):
    """SAM with a per-sample reweighted ascent loss; needs the sharpness-pass contract.

    Args:
        temperature: lambda >= 0 of the Gibbs weights (0 gives uniform weights, i.e. SAM).
        delta: finite-difference step of the gradient-norm probe (> 0).
        seed: seed of the Rademacher directions.
        (others): as `SAM`.
    """

    loop_needs = multi_pass(
        "it evaluates its closure three times per step, and its probe's finite "
        "difference |f_i(w + delta z) - f_i(w)| / delta of 16-bit losses is rounding noise",
        sharpness_pass=True,
        local_ascent=True,
        half_precision=False,
    )

    def __init__(
        self,
        params: Iterable[Any],
        base_optimizer: BaseOptimizer = torch.optim.SGD,
        rho: float = 0.05,
        temperature: float = 1.0,
        delta: float = 1e-3,
        seed: int = 0,
        adaptive: bool = False,
        local_ascent: bool = False,
        **base_kwargs: Any,
    ) -> None:
        require_non_negative("temperature", temperature)
        require_positive("delta", delta)
        super().__init__(params, base_optimizer, rho, adaptive, local_ascent, **base_kwargs)
        self.temperature = temperature
        self.delta = delta
        self.generator = torch.Generator().manual_seed(seed)
        self._signs = torch.empty(0)

    @torch.no_grad()
    def _probe_direction(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Move all trainable parameters to w + delta z; return (parameter, w) to restore."""
        params = [p for g in self.param_groups for p in g["params"] if p.requires_grad]
        saved = self.copy_weights(params)
        if not params:
            return saved
        sizes = [p.numel() for p in params]
        if self._signs.numel() < sum(sizes) or self._signs.dtype != params[0].dtype:
            self._signs = sign_buffer(sum(sizes), params[0].dtype)  # reused every step
        signs = rademacher(sum(sizes), self.generator, params[0].dtype, self._signs)
        signs = signs.to(params[0].device)
        directions = [z.view_as(p) for z, p in zip(signs.split(sizes), params, strict=True)]
        torch._foreach_add_(params, directions, alpha=self.delta)
        return saved

    @torch.no_grad()
    def step(self, closure: Closure | None = None) -> Any:  # type: ignore[override]
        """Probe, reweighted ascent, uniform descent; returns the weighted ascent loss at w (under
        DDP, the number of ranks times this rank's share of it)."""
        closure = self._require_closure(closure)
        probe = SharpnessPass(
            probe=True, perturbed=True, log=False, temperature=self.temperature, delta=self.delta
        )
        weights = self._probe_direction()
        self._run(closure, probe)
        self.restore(weights)
        ascent = SharpnessPass(
            reweight=True,
            probe_losses=probe.probe_losses,
            temperature=self.temperature,
            delta=self.delta,
            ranks=1 if self.local_ascent else ranks_sharing_the_ascent(),
        )
        loss = self._run(closure, ascent, ascent=True)
        self.perturb(backup=weights)  # w is unchanged since the probe: reuse its copy
        self._run(closure, SharpnessPass(perturbed=True, log=False))
        self.restore(weights)
        self.base_optimizer.step()
        return loss

    def state_dict(self) -> dict[str, Any]:
        """Base state plus the generator of the probe directions."""
        state = super().state_dict()
        state["rwsam_generator"] = self.generator.get_state()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        generator_state = state_dict.pop("rwsam_generator", None)
        super().load_state_dict(state_dict)
        if generator_state is not None:
            self.generator.set_state(generator_state)
