"""m-SAM: SAM whose perturbation is computed per micro-batch of size m (Foret et al. 2021,
Andriushchenko & Flammarion 2022; the m-sharpness studied by Luo et al. 2025).

For each micro-batch j of the batch: e_j = rho * g_j / ||g_j|| with g_j = grad L_j(w); then
grad L_j(w + e_j). The base step uses the mean of these perturbed gradients. That is 2 * (B / m)
closure calls on m samples each: the same arithmetic as SAM, in smaller pieces, and not
parallel over micro-batches (RW-SAM exists to avoid this). Under DDP each rank splits its own
batch; with `local_ascent` the ascent gradients stay per rank, the descent ones are averaged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from optiforge.optimizers.contract import multi_pass
from optiforge.optimizers.sam import SAM, BaseOptimizer, Closure
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_positive


class MSAM(SAM):
    """SAM with per-micro-batch perturbations; needs the sharpness-pass contract.

    Args:
        micro_batch_size: m, must divide the (per-process) batch size.
        (others): as `SAM`.
    """

    loop_needs = multi_pass(
        "it evaluates its closure twice per micro-batch (at w and at w + e_j)",
        sharpness_pass=True,
        local_ascent=True,
        ddp="per_rank",
    )

    def __init__(
        self,
        params: Iterable[Any],
        base_optimizer: BaseOptimizer = torch.optim.SGD,
        rho: float = 0.05,
        micro_batch_size: int = 32,
        adaptive: bool = False,
        local_ascent: bool = False,
        **base_kwargs: Any,
    ) -> None:
        require_positive("micro_batch_size", micro_batch_size)
        super().__init__(params, base_optimizer, rho, adaptive, local_ascent, **base_kwargs)
        self.micro_batch_size = micro_batch_size

    def _rows(self, index: int) -> Callable[[int], slice]:
        m = self.micro_batch_size

        def rows(batch_size: int) -> slice:
            if batch_size % m:
                raise ValueError(
                    f"micro_batch_size={m} must divide the batch size, got a batch of {batch_size} "
                    "(use a batch size divisible by m and drop the last partial batch: "
                    "data.drop_last true)"
                )
            return slice(index * m, (index + 1) * m)

        return rows

    @torch.no_grad()
    def step(self, closure: Closure | None = None) -> Any:  # type: ignore[override]
        """Loop over micro-batches; returns the mean loss at w over the whole batch."""
        closure = self._require_closure(closure)
        count, index, losses = 1, 0, []
        summed: list[torch.Tensor] | None = None
        params: list[torch.Tensor] = []
        while index < count:
            ascent = SharpnessPass(rows=self._rows(index))
            losses.append(self._run(closure, ascent, ascent=True))
            count = ascent.batch_size // self.micro_batch_size
            saved = self.perturb()
            self._run(closure, SharpnessPass(rows=self._rows(index), perturbed=True, log=False))
            self.restore(saved)
            params = [p for p, _ in self._params_with_grad()]
            grads = [p.grad.detach().clone() for p in params]
            summed = grads if summed is None else torch._foreach_add(summed, grads)
            index += 1
        if summed is not None:
            torch._foreach_mul_(summed, 1.0 / count)
            for param, grad in zip(params, summed, strict=True):
                param.grad = grad
        self.base_optimizer.step()
        return torch.stack(losses).mean()
