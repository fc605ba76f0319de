"""n-SAM: the perturbation comes from a separate batch of samples, not the descent batch.

The closure's batch holds N samples: the first `descent_batch_size` (B) are the descent batch,
the remaining N - B (ideally more than B) give the ascent gradient. With independent ascent
samples the perturbation carries no noise correlated with the descent gradient, the case whose
SDE has no variance regularizer in Luo et al. (2025); set the data's batch size to N.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optiforge.optimizers.contract import multi_pass
from optiforge.optimizers.sam import SAM, BaseOptimizer, Closure
from optiforge.optimizers.sharpness_pass import SharpnessPass
from optiforge.optimizers.validation import require_positive


class NSAM(SAM):
    """SAM with the ascent on rows [B:] and the descent on rows [:B] of each batch.

    Args:
        descent_batch_size: B, must be smaller than the batch the closure sees.
        (others): as `SAM`.
    """

    loop_needs = multi_pass(
        "it evaluates its closure twice per step, on the ascent rows and the descent rows",
        sharpness_pass=True,
        ddp="per_rank",
    )

    def __init__(
        self,
        params: Iterable[Any],
        base_optimizer: BaseOptimizer = torch.optim.SGD,
        rho: float = 0.05,
        descent_batch_size: int = 32,
        adaptive: bool = False,
        **base_kwargs: Any,
    ) -> None:
        require_positive("descent_batch_size", descent_batch_size)
        super().__init__(params, base_optimizer, rho, adaptive, **base_kwargs)
        self.descent_batch_size = descent_batch_size

    def _ascent_rows(self, batch_size: int) -> slice:
        if batch_size <= self.descent_batch_size:
            raise ValueError(
                f"descent_batch_size={self.descent_batch_size} must be smaller than the batch "
                f"size, got a batch of {batch_size} (set the data's batch size to B + ascent rows)"
            )
        return slice(self.descent_batch_size, None)

    def _descent_rows(self, batch_size: int) -> slice:
        return slice(0, self.descent_batch_size)

    @torch.no_grad()
    def step(self, closure: Closure | None = None) -> Any:  # type: ignore[override]
        """Ascent on the separate rows at w, descent on the first B rows at w + e."""
        closure = self._require_closure(closure)
        loss = self._run(closure, SharpnessPass(rows=self._ascent_rows), ascent=True)
        saved = self.perturb()
        self._run(closure, SharpnessPass(rows=self._descent_rows, perturbed=True, log=False))
        self.restore(saved)
        self.base_optimizer.step()
        return loss
